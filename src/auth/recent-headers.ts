// Values (principals) by the exact Authorization header they were established from.
//
// Why not a Map keyed by the header: every request brings a new ~450-character string, and a
// Map lookup hashes all of it (~170 ns), after a slice for the token (~100 ns). Here the key is
// a hash of the header's last characters (a token's signature: what differs between tokens),
// and a hit is confirmed by comparing the whole text. Two headers with the same tail share a
// slot: the later one wins and the other is verified again, so a collision costs time only.
const TAIL = 24;

function tailHash(text: string): number {
  let h = 0x811c9dc5 ^ text.length;
  for (let i = Math.max(0, text.length - TAIL); i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h;
}

export class RecentHeaders<V> {
  private readonly slots = new Map<number, { text: string; value: V }>();

  constructor(private readonly limit: number) {}

  get size(): number {
    return this.slots.size;
  }

  get(text: string): V | undefined {
    const slot = this.slots.get(tailHash(text));
    return slot !== undefined && slot.text === text ? slot.value : undefined;
  }

  set(text: string, value: V): void {
    const key = tailHash(text);
    // The oldest entry leaves first when full (a Map keeps insertion order).
    if (!this.slots.has(key) && this.slots.size >= this.limit) this.slots.delete(this.slots.keys().next().value!);
    this.slots.set(key, { text, value });
  }

  delete(text: string): void {
    const key = tailHash(text);
    if (this.slots.get(key)?.text === text) this.slots.delete(key);
  }
}

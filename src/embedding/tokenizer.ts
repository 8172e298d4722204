// BERT WordPiece tokenizer for a Hugging Face `tokenizer.json` (BertNormalizer, lower-case,
// BertPreTokenizer, WordPiece with "##" continuation). Small enough to own, and it keeps
// the executable free of a tokenizer runtime.

export interface TokenizerFile {
  normalizer?: { lowercase?: boolean; strip_accents?: boolean | null; handle_chinese_chars?: boolean; clean_text?: boolean };
  model: { vocab: Record<string, number>; unk_token: string; continuing_subword_prefix: string; max_input_chars_per_word: number };
}

export interface Encoding {
  ids: number[];
}

function isControl(cp: number, ch: string): boolean {
  if (ch === "\t" || ch === "\n" || ch === "\r") return false;
  return /\p{Cc}|\p{Cf}|\p{Co}|\p{Cs}/u.test(ch) || cp === 0xfffd;
}

function isWhitespace(ch: string): boolean {
  return ch === " " || ch === "\t" || ch === "\n" || ch === "\r" || /\p{Zs}/u.test(ch);
}

function isPunctuation(cp: number, ch: string): boolean {
  // BERT treats every non-alphanumeric ASCII symbol as punctuation, plus Unicode P*.
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126)) return true;
  return /\p{P}/u.test(ch);
}

function isChinese(cp: number): boolean {
  return (
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x20000 && cp <= 0x2a6df) ||
    (cp >= 0x2a700 && cp <= 0x2b73f) ||
    (cp >= 0x2b740 && cp <= 0x2b81f) ||
    (cp >= 0x2b820 && cp <= 0x2ceaf) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0x2f800 && cp <= 0x2fa1f)
  );
}

export class WordPieceTokenizer {
  readonly clsId: number;
  readonly sepId: number;
  private readonly unkId: number;
  private readonly vocab: Map<string, number>;
  private readonly prefix: string;
  private readonly maxCharsPerWord: number;
  private readonly lowercase: boolean;
  private readonly stripAccents: boolean;

  constructor(file: TokenizerFile) {
    this.vocab = new Map(Object.entries(file.model.vocab));
    const id = (t: string) => {
      const v = this.vocab.get(t);
      if (v === undefined) throw new Error(`tokenizer: vocabulary has no ${t}`);
      return v;
    };
    this.clsId = id("[CLS]");
    this.sepId = id("[SEP]");
    this.unkId = id(file.model.unk_token);
    this.prefix = file.model.continuing_subword_prefix;
    this.maxCharsPerWord = file.model.max_input_chars_per_word;
    this.lowercase = file.normalizer?.lowercase ?? true;
    // Hugging Face: strip_accents null follows lowercase.
    this.stripAccents = file.normalizer?.strip_accents ?? this.lowercase;
  }

  /** Words after normalisation and pre-tokenisation (whitespace and punctuation splits). */
  words(text: string): string[] {
    let cleaned = "";
    for (const ch of text) {
      const cp = ch.codePointAt(0)!;
      if (cp === 0 || isControl(cp, ch)) continue;
      if (isWhitespace(ch)) cleaned += " ";
      else if (isChinese(cp)) cleaned += ` ${ch} `;
      else cleaned += ch;
    }
    if (this.lowercase) cleaned = cleaned.toLowerCase();
    if (this.stripAccents) cleaned = cleaned.normalize("NFD").replace(/\p{Mn}/gu, "");
    const out: string[] = [];
    for (const chunk of cleaned.split(" ")) {
      if (!chunk) continue;
      let current = "";
      for (const ch of chunk) {
        if (isPunctuation(ch.codePointAt(0)!, ch)) {
          if (current) out.push(current);
          out.push(ch);
          current = "";
        } else current += ch;
      }
      if (current) out.push(current);
    }
    return out;
  }

  private wordPiece(word: string, into: number[]): void {
    const chars = Array.from(word);
    if (chars.length > this.maxCharsPerWord) {
      into.push(this.unkId);
      return;
    }
    const pieces: number[] = [];
    let start = 0;
    while (start < chars.length) {
      let end = chars.length;
      let found: number | undefined;
      while (start < end) {
        const sub = (start > 0 ? this.prefix : "") + chars.slice(start, end).join("");
        found = this.vocab.get(sub);
        if (found !== undefined) break;
        end--;
      }
      if (found === undefined) {
        into.push(this.unkId);
        return;
      }
      pieces.push(found);
      start = end;
    }
    into.push(...pieces);
  }

  /** Token ids of `text` wrapped in [CLS] … [SEP], truncated to `maxLength` in all. */
  encode(text: string, maxLength: number): Encoding {
    const ids = [this.clsId];
    const budget = maxLength - 1;
    for (const word of this.words(text)) {
      this.wordPiece(word, ids);
      if (ids.length >= budget) break;
    }
    if (ids.length > budget) ids.length = budget;
    ids.push(this.sepId);
    return { ids };
  }

  /** Number of word-piece tokens in `text`, without the special tokens. */
  count(text: string): number {
    const ids: number[] = [];
    for (const word of this.words(text)) this.wordPiece(word, ids);
    return ids.length;
  }
}

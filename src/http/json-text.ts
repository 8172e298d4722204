// A JSON body as it arrived, not yet parsed (issue 13 finding 4). The guarded routes' parse
// stage only reads the text; the guard parses it once the caller is known, so that a body
// nobody is entitled to send costs no parsing at all.
export class JsonText {
  constructor(readonly text: string) {}
}

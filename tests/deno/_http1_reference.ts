/**
 * A reference model of how a proxy reads a response off an HTTP/1.1
 * connection, written plainly from RFC 9112 §6.3 (message body length),
 * §7.1 (chunked coding) and §9.3 (persistence), with the choices the
 * gateway made (`src/deno/_http1_framing.ts`'s module documentation): a
 * response it would not forward is an error. It works on the response as a
 * description (status line and fields as values, the bytes after the head
 * as bytes), not on the wire, and shares no code with the client: the fuzz
 * test (`http1_framing_test.ts`) compares the two.
 */

/** A final response, as the test writes it on the wire. */
export interface ResponseDescription {
  method: "GET" | "HEAD" | "POST";
  major: number;
  minor: number;
  status: number;
  fields: [string, string][];
  /** The bytes after the header section (the body, and anything after it). */
  after: Uint8Array;
  /** Whether the upstream closes the connection after `after`. */
  closes: boolean;
}

/** What reading it comes to. */
export type Outcome =
  | { kind: "error" }
  /** The response has not ended with the bytes there are: more are awaited. */
  | { kind: "incomplete" }
  | { kind: "complete"; status: number; body: string; reusable: boolean };

const ERROR: Outcome = { kind: "error" };
const INCOMPLETE: Outcome = { kind: "incomplete" };

/** Field values without their surrounding whitespace (RFC 9110 §5.5). */
function valuesOf(d: ResponseDescription, name: string): string[] {
  return d.fields.filter(([n]) => n.toLowerCase() === name).map(([, v]) =>
    v.replace(/^[ \t]+|[ \t]+$/g, "")
  );
}

/** The elements of comma-separated lists, empty ones dropped (RFC 9110 §5.6.1). */
function elementsOf(values: string[]): string[] {
  return values.flatMap((v) => v.split(",")).map((e) => e.trim()).filter((e) => e !== "");
}

function isDigits(text: string): boolean {
  if (text === "") return false;
  for (const c of text) if (c < "0" || c > "9") return false;
  return true;
}

function latin1(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += String.fromCharCode(b);
  return out;
}

/** The outcome of reading `d`. */
export function referenceOutcome(d: ResponseDescription): Outcome {
  if (d.major !== 1 || d.status < 100 || d.status > 599 || d.status === 101) return ERROR;
  const lengths = valuesOf(d, "content-length");
  const codingFields = valuesOf(d, "transfer-encoding");
  // Every Content-Length must be digits, and all the same number.
  if (lengths.some((v) => !isDigits(v) || Number(v) > Number.MAX_SAFE_INTEGER)) return ERROR;
  if (new Set(lengths.map(Number)).size > 1) return ERROR;

  let body: Uint8Array;
  let used: number;
  let byClose = false;
  if (d.method === "HEAD" || d.status === 204 || d.status === 304) {
    body = new Uint8Array(0);
    used = 0;
  } else if (codingFields.length > 0) {
    if (d.minor === 0 || lengths.length > 0) return ERROR;
    const codings = elementsOf(codingFields);
    if (codings.length !== 1 || codings[0]!.toLowerCase() !== "chunked") return ERROR;
    if (d.status === 205) return ERROR;
    const read = dechunk(d.after);
    if (read === "error") return ERROR;
    if (read === "incomplete") return d.closes ? ERROR : INCOMPLETE;
    body = read.body;
    used = read.used;
  } else if (lengths.length > 0) {
    const n = Number(lengths[0]);
    if (d.status === 205 && n !== 0) return ERROR;
    if (d.after.length < n) return d.closes ? ERROR : INCOMPLETE;
    body = d.after.subarray(0, n);
    used = n;
  } else if (d.status === 205) {
    body = new Uint8Array(0);
    used = 0;
  } else {
    if (!d.closes) return INCOMPLETE;
    body = d.after;
    used = d.after.length;
    byClose = true;
  }

  const options = elementsOf(valuesOf(d, "connection")).map((o) => o.toLowerCase());
  const reusable = !byClose && used === d.after.length && !options.includes("close") &&
    (d.minor !== 0 || options.includes("keep-alive")) &&
    !(d.status === 205 && lengths.length === 0);
  return { kind: "complete", status: d.status, body: latin1(body), reusable };
}

/** The next line from `at`: its text without CRLF or LF, and where the next starts; or null. */
function lineAt(bytes: Uint8Array, at: number): { text: string; next: number } | null {
  for (let i = at; i < bytes.length; i++) {
    if (bytes[i] === 0x0a) {
      let text = latin1(bytes.subarray(at, i));
      if (text.endsWith("\r")) text = text.slice(0, -1);
      return { text, next: i + 1 };
    }
  }
  return null;
}

const HEX = "0123456789abcdefABCDEF";

/** The chunked body at the start of `bytes` (RFC 9112 §7.1), trailers read and dropped. */
function dechunk(bytes: Uint8Array): { body: Uint8Array; used: number } | "error" | "incomplete" {
  const parts: number[] = [];
  let at = 0;
  for (;;) {
    const line = lineAt(bytes, at);
    if (line === null) return "incomplete";
    at = line.next;
    // chunk-size = 1*HEXDIG, then nothing or BWS ";" extensions.
    let digits = 0;
    while (digits < line.text.length && HEX.includes(line.text[digits]!)) digits++;
    if (digits === 0 || line.text.includes("\r")) return "error";
    const rest = line.text.slice(digits).replace(/^[ \t]*/, "");
    if (rest !== "" && !rest.startsWith(";")) return "error";
    const size = parseInt(line.text.slice(0, digits), 16);
    if (size > Number.MAX_SAFE_INTEGER) return "error";
    if (size === 0) break;
    if (bytes.length < at + size) return "incomplete";
    for (let i = 0; i < size; i++) parts.push(bytes[at + i]!);
    at += size;
    const end = lineAt(bytes, at);
    if (end === null) return "incomplete";
    if (end.text !== "") return "error";
    at = end.next;
  }
  // Trailer fields up to an empty line, dropped.
  for (;;) {
    const line = lineAt(bytes, at);
    if (line === null) return "incomplete";
    at = line.next;
    if (line.text === "") return { body: Uint8Array.from(parts), used: at };
  }
}

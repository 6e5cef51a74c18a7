// The SDK's client module also holds printExchange, which writes to Node's stdout by default; the
// console never calls it, but its types name `process`.
declare const process: { stdout: { write(text: string): unknown } };

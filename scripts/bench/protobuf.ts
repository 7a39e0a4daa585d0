// A protobuf wire-format reader just big enough to read OTLP exports without their schema: the
// metrics bench's trace sink counts the spans of each export, the traces test decodes them
// (tests import it from here, as they import scripts/bench/services.ts).

/** One message's fields in order: field number, then a number (varint, fixed64 as a double, fixed32) or the bytes (length-delimited). */
export function* protobufFields(buf: Buffer): Generator<[number, number | Buffer]> {
  let pos = 0;
  const varint = () => {
    let value = 0;
    for (let shift = 1; ; shift *= 128) {
      const byte = buf[pos++]!;
      value += (byte & 0x7f) * shift;
      if (byte < 0x80) return value;
    }
  };
  while (pos < buf.length) {
    const tag = varint();
    const wire = tag & 7;
    const field = Math.floor(tag / 8);
    if (wire === 0) yield [field, varint()];
    else if (wire === 1) yield [field, buf.readDoubleLE((pos += 8) - 8)];
    else if (wire === 5) yield [field, buf.readUInt32LE((pos += 4) - 4)];
    else if (wire === 2) {
      const length = varint();
      yield [field, buf.subarray(pos, (pos += length))];
    } else throw new Error(`protobuf wire type ${wire} is not read here`);
  }
}

/** The length-delimited fields numbered `field` of a message (embedded messages, strings, bytes). */
export function protobufMessages(buf: Buffer, field: number): Buffer[] {
  const out: Buffer[] = [];
  for (const [n, value] of protobufFields(buf)) if (n === field && Buffer.isBuffer(value)) out.push(value);
  return out;
}

/** Spans in an OTLP ExportTraceServiceRequest: resource_spans (1) > scope_spans (2) > spans (2). */
export const otlpProtobufSpanCount = (body: Buffer): number =>
  protobufMessages(body, 1).reduce((n, rs) => n + protobufMessages(rs, 2).reduce((m, ss) => m + protobufMessages(ss, 2).length, 0), 0);

// http_stream.mjs - one recorded connection's bytes split into HTTP/1.1
// messages: the client's into requests, the server's into replies.
//
// Only what the recording needs: a request line or status line, header
// lines, and a body framed by Content-Length or chunked coding (a reply
// to HEAD, a 1xx, 204 or 304 has none; a reply with neither runs to the
// connection's end).  Client bytes that do not parse (the framing tests'
// hostile requests) end the requests there: the replies to them are still
// checked, against the request line when one can be read.

const CRLF2 = Buffer.from('\r\n\r\n');

// {head: {line, headers: {lowercase name: [values]}}, body: Buffer, end} at
// offset `at` of buf, or null when no complete message starts there.
function readMessage(buf, at, noBody, isRequest) {
  const end = buf.indexOf(CRLF2, at);
  if (end < 0) return null;
  const lines = buf.subarray(at, end).toString('latin1').split('\r\n');
  const headers = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) return null;
    const name = line.slice(0, colon).trim().toLowerCase();
    (headers[name] ||= []).push(line.slice(colon + 1).trim());
  }
  let pos = end + 4;
  const head = { line: lines[0], headers };
  if (noBody(head)) return { head, body: Buffer.alloc(0), end: pos };
  const te = (headers['transfer-encoding'] || []).join(',').toLowerCase();
  if (te.includes('chunked')) {
    const parts = [];
    for (;;) {
      const nl = buf.indexOf('\r\n', pos);
      if (nl < 0) return null;
      const size = parseInt(buf.subarray(pos, nl).toString('latin1'), 16);
      if (!Number.isFinite(size)) return null;
      pos = nl + 2;
      if (size === 0) {
        const trailerEnd = buf.indexOf(CRLF2, pos - 2);
        if (trailerEnd < 0) return null;
        return { head, body: Buffer.concat(parts), end: trailerEnd + 4 };
      }
      if (pos + size + 2 > buf.length) return null;
      parts.push(buf.subarray(pos, pos + size));
      pos += size + 2;
    }
  }
  const lengths = headers['content-length'];
  if (lengths) {
    if (lengths.length !== 1 || !/^\d+$/.test(lengths[0])) return null;
    const n = Number(lengths[0]);
    if (pos + n > buf.length) return null;
    return { head, body: buf.subarray(pos, pos + n), end: pos + n };
  }
  return isRequest ? { head, body: Buffer.alloc(0), end: pos }
                      : { head, body: buf.subarray(pos), end: buf.length };
}

// The requests of a client byte stream: [{method, path, headers, body}],
// and `rest`: the bytes left that do not parse (null when none).
export function splitRequests(buf) {
  const requests = [];
  let at = 0;
  while (at < buf.length) {
    const m = readMessage(buf, at, () => false, true);
    const line = buf.subarray(at, at + 8192).toString('latin1').split('\r\n')[0];
    const [method, target] = line.split(' ');
    if (!m || !/^[A-Z]+ \S+ HTTP\/1\.[01]$/.test(m.head.line)) {
      return { requests, rest: { method, target: target || '',
                                 bytes: buf.subarray(at) } };
    }
    requests.push({ method, target, headers: m.head.headers, body: m.body });
    at = m.end;
  }
  return { requests, rest: null };
}

// The replies of a server byte stream, given the methods of the requests
// they answer: [{status, headers, body, truncated}] (1xx interim replies
// left out; `truncated` when the connection ended inside the body).
export function splitReplies(buf, methods) {
  const replies = [];
  let at = 0;
  while (at < buf.length) {
    const method = methods[replies.length];
    const m = readMessage(buf, at, (head) => {
      const status = Number(head.line.split(' ')[1]);
      return method === 'HEAD' || status < 200 || status === 204 ||
             status === 304;
    }, false);
    if (!m) {
      // the connection ended inside it (a client that left, a server that
      // gave up): its status line and headers, when they are whole
      const end = buf.indexOf(CRLF2, at);
      const lines = buf.subarray(at, end < 0 ? at : end).toString('latin1').split('\r\n');
      const status = Number(lines[0].split(' ')[1]);
      if (end >= 0 && status >= 200) {
        const headers = {};
        for (const line of lines.slice(1)) {
          const colon = line.indexOf(':');
          (headers[line.slice(0, colon).trim().toLowerCase()] ||= []).push(line.slice(colon + 1).trim());
        }
        replies.push({ status, headers, body: buf.subarray(end + 4), truncated: true });
      }
      break;
    }
    const status = Number(m.head.line.split(' ')[1]);
    if (status >= 200) replies.push({ status, headers: m.head.headers, body: m.body });
    at = m.end;
  }
  return replies;
}

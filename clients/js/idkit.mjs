// A JavaScript client of idkit serve, with nothing but fetch (Node 18 or
// later, Deno, Bun, browsers): idkit.v1.IDService over the Connect
// protocol's JSON, and the HTTP API under /v1/.
//
// IDs arrive as strings, in both APIs: TraceIds, DecimalIds and most
// snowflakes are above 2^53, where a JavaScript number loses digits. Use
// BigInt(id) to compute with one; a jssafe snowflake is at most 2^53 and
// Number(id) holds it exactly.

/** An error answered by the service: its code and message. */
export class IDKitError extends Error {
  /**
   * @param {string} code  the Connect code ("invalid_argument",
   *   "not_found", "unauthenticated", "resource_exhausted",
   *   "unavailable"...), or "http_STATUS" for the /v1/ API
   * @param {string} message  what was wrong, from the server
   * @param {number} status  the HTTP status
   * @param {number|undefined} retryAfter  seconds to wait, when the server says
   */
  constructor(code, message, status, retryAfter) {
    super(`${code}: ${message}`);
    this.name = 'IDKitError';
    this.code = code;
    this.status = status;
    this.retryAfter = retryAfter;
  }
}

function retryAfter(res) {
  const v = res.headers.get('retry-after');
  return v === null ? undefined : Number(v);
}

/** A client of one server. */
export class Client {
  /**
   * @param {string} baseURL  such as "http://127.0.0.1:8080"
   * @param {{token?: string}} options  a bearer token, when the server
   *   requires one (--token-file)
   */
  constructor(baseURL, { token } = {}) {
    this.baseURL = baseURL.replace(/\/+$/, '');
    this.token = token;
  }

  headers(extra = {}) {
    const h = { ...extra };
    if (this.token) h.Authorization = `Bearer ${this.token}`;
    return h;
  }

  /** Calls a method of idkit.v1.IDService with a JSON message. */
  async call(method, message) {
    const res = await fetch(`${this.baseURL}/idkit.v1.IDService/${method}`, {
      method: 'POST',
      headers: this.headers({ 'Content-Type': 'application/json' }),
      body: JSON.stringify(message),
    });
    const text = await res.text();
    const body = text === '' ? {} : JSON.parse(text);
    if (!res.ok) {
      throw new IDKitError(body.code ?? 'unknown', body.message ?? text, res.status, retryAfter(res));
    }
    return body;
  }

  /**
   * n new IDs of scheme (traceid, snowflake, decimalid, objectid or
   * segment/TAG) through the RPC API, in the forms format names:
   * 'FORMAT_TEXT' (the default here), 'FORMAT_BINARY' (the server's
   * default) or 'FORMAT_TEXT_AND_BINARY'.
   * @returns {Promise<{ids: string[], values: string[], raw: string[]}>}
   *   the IDs as text; as unsigned 64-bit integers in decimal strings (all
   *   schemes but objectid); objectid's 12 bytes each in base64; each
   *   empty unless its form was asked for
   */
  async next(scheme, n = 1, format = 'FORMAT_TEXT') {
    const msg = { scheme, n: String(n), format };
    const out = await this.call('Next', msg);
    return { ids: out.ids ?? [], values: out.values ?? [], raw: out.raw ?? [] };
  }

  /**
   * The parts of an ID through the RPC API, as an object in order, with
   * the names and values of the HTTP API's inspection.
   */
  async inspect(scheme, id) {
    const out = await this.call('Inspect', { scheme, id });
    const parts = {};
    for (const p of out.parts ?? []) {
      // int64 values are JSON strings in the Connect protocol; parts are
      // counters, nodes and seconds, well within a number.
      parts[p.name] = p.text ?? Number(p.integer ?? 0);
    }
    return parts;
  }

  async get(path, accept = 'application/json') {
    const res = await fetch(`${this.baseURL}${path}`, { headers: this.headers({ Accept: accept }) });
    const text = await res.text();
    if (!res.ok) {
      let message = text;
      try { message = JSON.parse(text).error; } catch { /* not JSON */ }
      throw new IDKitError(`http_${res.status}`, message, res.status, retryAfter(res));
    }
    return text;
  }

  /** n new IDs of scheme through GET /v1/{scheme}?n=N. */
  async httpNext(scheme, n = 1) {
    return JSON.parse(await this.get(`/v1/${scheme}?n=${n}`)).ids;
  }

  /** The parts of an ID through GET /v1/{scheme}/{id}. */
  async httpInspect(scheme, id) {
    return JSON.parse(await this.get(`/v1/${scheme}/${encodeURIComponent(id)}`));
  }
}

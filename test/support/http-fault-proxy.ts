/**
 * An HTTP-level fault proxy for client tests: it sits between a client and the service on
 * 127.0.0.1, forwards each request, and can hurt it on the way. A test decides per request:
 *
 * - `pass`: forward and answer normally;
 * - `delay`: wait, then forward and answer normally;
 * - `reset`: cut the client's connection before forwarding (the service never sees it);
 * - `cut-in-flight`: forward, and cut the client's connection at once, while the service
 *   still runs it (a quick retry meets the key in flight: 409);
 * - `drop-response`: forward, wait for the whole answer (the service has committed), then
 *   cut the client's connection instead of answering;
 * - `unavailable`: answer 503 itself, as a gateway in front of a busy service would (the
 *   service never sees it).
 *
 * Every answer the service gave is recorded with whether the client got it.
 */
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
} from 'node:http';

export type Fault =
  | { kind: 'pass' }
  | { kind: 'delay'; ms: number }
  | { kind: 'reset' }
  | { kind: 'cut-in-flight' }
  | { kind: 'drop-response' }
  | { kind: 'unavailable' };

export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Exchange {
  request: SeenRequest;
  /** When the request arrived (Date.now()). */
  at: number;
  fault: Fault['kind'];
  /** The service's answer; undefined when it was never asked (`reset`). */
  status?: number;
  replayed?: boolean;
  headers?: IncomingHttpHeaders;
  body?: string;
  /** Whether the client received that answer. */
  delivered: boolean;
}

export interface HttpFaultProxy {
  readonly url: string;
  /** Every request seen, in arrival order, with what became of it. */
  readonly exchanges: readonly Exchange[];
  /** Decides each request's fault; `pass` by default. */
  setFaults(decide: (request: SeenRequest) => Fault): void;
  /**
   * With `false`, every answer closes its connection. Browsers silently re-send a request
   * (POST included) whose reused connection died before any answer byte; a fresh connection
   * per request makes the client's own retry the only one.
   */
  setKeepAlive(keepAlive: boolean): void;
  close(): Promise<void>;
}

export async function startHttpFaultProxy(target: string): Promise<HttpFaultProxy> {
  const upstream = new URL(target);
  const exchanges: Exchange[] = [];
  let decide: (request: SeenRequest) => Fault = () => ({ kind: 'pass' });
  let keepAlive = true;

  const server: Server = createServer(async (req, res) => {
    const at = Date.now();
    const body = await readBody(req);
    const seen: SeenRequest = {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: req.headers,
      body,
    };
    const fault = decide(seen);
    const exchange: Exchange = { request: seen, at, fault: fault.kind, delivered: false };
    exchanges.push(exchange);
    const cut = () => req.socket.destroy();
    if (fault.kind === 'reset') {
      cut();
      return;
    }
    if (fault.kind === 'unavailable') {
      exchange.status = 503;
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.end('Service Unavailable', () => {
        exchange.delivered = true;
      });
      return;
    }
    if (fault.kind === 'delay') await sleep(fault.ms);
    const answer = forward(upstream, seen);
    if (fault.kind === 'cut-in-flight') cut();
    let reply: Reply;
    try {
      reply = await answer;
    } catch {
      cut(); // the service went away: the client sees what it would see without a proxy
      return;
    }
    exchange.status = reply.status;
    exchange.replayed = reply.headers['idempotent-replayed'] === 'true';
    exchange.headers = reply.headers;
    exchange.body = reply.body;
    if (fault.kind === 'cut-in-flight' || fault.kind === 'drop-response') {
      cut();
      return;
    }
    const headers = { ...reply.headers };
    delete headers['transfer-encoding'];
    delete headers.connection;
    delete headers['keep-alive'];
    if (!keepAlive) res.shouldKeepAlive = false;
    res.writeHead(reply.status, { ...headers, 'content-length': Buffer.byteLength(reply.body) });
    res.end(reply.body, () => {
      exchange.delivered = true;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no port');

  return {
    url: `http://127.0.0.1:${address.port}`,
    exchanges,
    setFaults(next) {
      decide = next;
    },
    setKeepAlive(value) {
      keepAlive = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

function forward(upstream: URL, seen: SeenRequest): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers = { ...seen.headers, host: upstream.host, connection: 'close' };
    delete headers['content-length'];
    const outgoing = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: seen.method,
        path: seen.path,
        headers: { ...headers, 'content-length': Buffer.byteLength(seen.body) },
        agent: false,
      },
      (incoming) => {
        readBody(incoming).then(
          (body) =>
            resolve({ status: incoming.statusCode ?? 502, headers: incoming.headers, body }),
          reject,
        );
      },
    );
    outgoing.on('error', reject);
    outgoing.end(seen.body);
  });
}

function readBody(message: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    message.on('data', (chunk: Buffer) => chunks.push(chunk));
    message.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    message.on('error', reject);
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

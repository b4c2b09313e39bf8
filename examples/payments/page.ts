/**
 * The page at `/`: a payment form that pays through `mutation-guard/client`'s fetch wrapper,
 * in the browser. The client's modules are served from the package's sources at
 * `/client/*.js`, compiled to JavaScript on request: the same files users import, no bundler.
 *
 * The page keeps its pending intent (key and input) in localStorage until an answer arrives,
 * so a reload in the middle of a payment resumes it with the same key instead of paying twice.
 */
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';

const CLIENT_SOURCES = new URL('../../src/client/', import.meta.url);
const MODULE_PATH = /^\/client\/([a-z-]+)\.js$/;
const compiled = new Map<string, string>();

/** Answers GET / and GET /client/<module>.js; false for anything else. */
export function servePage(req: IncomingMessage, res: ServerResponse, pathname: string): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  if (pathname === '/') {
    send(res, 200, 'text/html; charset=utf-8', PAGE);
    return true;
  }
  const name = MODULE_PATH.exec(pathname)?.[1];
  if (name === undefined) return false;
  clientModule(name).then(
    (code) => send(res, 200, 'text/javascript; charset=utf-8', code),
    () => send(res, 404, 'text/plain; charset=utf-8', `No client module ${name}.js`),
  );
  return true;
}

async function clientModule(name: string): Promise<string> {
  const cached = compiled.get(name);
  if (cached !== undefined) return cached;
  const source = await readFile(new URL(`${name}.ts`, CLIENT_SOURCES), 'utf8');
  // Loaded on the first page view only: the service starts without the compiler.
  const { default: ts } = await import('typescript');
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
  });
  compiled.set(name, outputText);
  return outputText;
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
}

const PAGE = /* html */ `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>mutation-guard payments</title>
  <style>
    body { font: 16px/1.5 system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem; }
    label { display: block; margin: .5rem 0; }
    input { font: inherit; padding: .2rem .4rem; }
    button { font: inherit; padding: .3rem 1rem; margin-right: .5rem; }
    pre { background: #f4f4f4; padding: .75rem; overflow: auto; }
    #log { color: #555; font-size: .9rem; }
  </style>
</head>
<body>
  <h1>Pay once, however often the network fails</h1>
  <p>This page pays through <code>mutation-guard/client</code>: one idempotency key per
    payment, the same key on every retry, and the server's first answer in the end.</p>
  <form id="pay">
    <label>Account <input name="account" value="acct_demo" required></label>
    <label>Amount (cents) <input name="amount" type="number" value="1299" min="1" required></label>
    <label>Currency <input name="currency" value="EUR" required></label>
    <label>Customer <input name="customerId" value="cus_42" required></label>
    <button type="submit">Pay</button>
    <button type="button" id="resume" hidden>Resume the unfinished payment</button>
  </form>
  <p id="status" role="status">Ready.</p>
  <pre id="payment" hidden></pre>
  <ul id="log"></ul>
  <script type="module">
    import { idempotentFetch, newIdempotencyKey, wasReplayed } from '/client/index.js';

    const PENDING = 'mutation-guard-demo:pending-payment';
    const form = document.querySelector('#pay');
    const status = document.querySelector('#status');
    const shown = document.querySelector('#payment');
    const resume = document.querySelector('#resume');
    const log = document.querySelector('#log');
    const note = (text) => log.append(Object.assign(document.createElement('li'), { textContent: text }));

    const pay = idempotentFetch(fetch, {
      attempts: 6,
      onRetry: ({ attempt, reason, delayMs }) =>
        note('attempt ' + attempt + ' failed (' + reason + '); retrying in ' + Math.round(delayMs) + ' ms'),
    });

    // An intent still pending from before a reload: resume it with its own key.
    const pending = JSON.parse(localStorage.getItem(PENDING) ?? 'null');
    if (pending) {
      resume.hidden = false;
      status.textContent = 'A payment was still unanswered when the page closed. Resume it: it will not be paid twice.';
    }
    resume.addEventListener('click', () => send(pending));

    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const fields = new FormData(form);
      send({
        key: newIdempotencyKey(),
        account: fields.get('account'),
        input: {
          amount: Number(fields.get('amount')),
          currency: fields.get('currency'),
          customerId: fields.get('customerId'),
        },
      });
    });

    async function send(intent) {
      localStorage.setItem(PENDING, JSON.stringify(intent));
      status.textContent = 'Paying…';
      try {
        const response = await pay('/graphql', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: 'Bearer ' + intent.account,
            'idempotency-key': intent.key,
          },
          body: JSON.stringify({
            query: 'mutation Pay($input: CreatePaymentInput!) { createPayment(input: $input) { id amount currency customerId createdAt } }',
            variables: { input: intent.input },
          }),
        });
        const body = await response.json();
        if (body.data?.createPayment) {
          localStorage.removeItem(PENDING);
          resume.hidden = true;
          const payment = body.data.createPayment;
          shown.hidden = false;
          shown.dataset.paymentId = payment.id;
          shown.dataset.replayed = String(wasReplayed(response));
          shown.textContent = JSON.stringify(payment, null, 2);
          status.textContent = wasReplayed(response)
            ? 'Paid. This is the first answer, replayed by the server: the payment was made once.'
            : 'Paid.';
        } else {
          // A refusal (400, 422...) will not change by retrying: the intent is over.
          localStorage.removeItem(PENDING);
          status.textContent = 'Refused (' + response.status + '): ' + (body.errors?.[0]?.message ?? response.statusText);
        }
      } catch (error) {
        // Still unknown: keep the intent, so that Resume sends the same key.
        resume.hidden = false;
        status.textContent = 'No answer yet (' + error.message + '). Resume to try again with the same key.';
      }
    }
  </script>
</body>
</html>
`;

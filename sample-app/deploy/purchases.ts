import { request } from 'node:http';

/** What the buyers saw, answer by answer. */
export interface Tally {
  sold: number;
  soldOut: number;
  /** 409: the SKU's lock stayed busy past waitMs. */
  busy: number;
  /** 5xx answers, by status. */
  serverErrors: Record<number, number>;
  /** 5xx answers, by the `code` of their body (`LOCK_SHUTTING_DOWN`, `LOCK_STORE_UNAVAILABLE`, ...; `none` without one). */
  serverErrorsByCode: Record<string, number>;
  /** Other answers (4xx but 409), by status. */
  other: Record<number, number>;
  /** Connections refused or reset before any answer (the instance was down): sent again to another instance. */
  notConnected: number;
  /** Sales acknowledged per SKU. */
  soldBySku: Record<string, number>;
  /** A few 5xx bodies, to say why. */
  errorSamples: string[];
}

type Answer = { status: number; body: string } | { refused: string };

/** One POST on a connection of its own, as a proxy without upstream keep-alive sends it (nginx's default). */
function post(url: string): Promise<Answer> {
  return new Promise((resolve) => {
    const req = request(url, { method: 'POST', agent: false, headers: { connection: 'close' } }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      response.on('error', () => resolve({ status: 0, body: 'response broken off' }));
    });
    // No answer began: the instance was not listening (or reset the connection before reading it).
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ refused: error.code ?? error.message }));
    req.end();
  });
}

/**
 * Buys from the instances until `until` resolves, `concurrency` buyers at a time, each purchase
 * of a SKU picked in turn, sent to the instances round-robin as a load balancer would; a purchase
 * whose connection was refused goes to the next instance.
 */
export async function buyUntil(
  urls: readonly string[],
  skus: readonly string[],
  concurrency: number,
  until: Promise<void>,
): Promise<Tally> {
  const tally: Tally = {
    sold: 0,
    soldOut: 0,
    busy: 0,
    serverErrors: {},
    serverErrorsByCode: {},
    other: {},
    notConnected: 0,
    soldBySku: Object.fromEntries(skus.map((sku) => [sku, 0])),
    errorSamples: [],
  };
  let done = false;
  void until.then(() => (done = true));
  let next = 0;
  const buyer = async () => {
    while (!done) {
      const sku = skus[next % skus.length];
      let answer: Answer;
      let tries = 0;
      do answer = await post(`${urls[next++ % urls.length]}/inventory/${sku}/sale`);
      while ('refused' in answer && (tally.notConnected++, ++tries < urls.length * 20));
      if ('refused' in answer) throw new Error(`no instance answered: ${answer.refused}`);
      if (answer.status === 200) {
        if ((JSON.parse(answer.body) as { sold: boolean }).sold) {
          tally.sold++;
          tally.soldBySku[sku]++;
        } else tally.soldOut++;
      } else if (answer.status === 409) tally.busy++;
      else if (answer.status >= 500 || answer.status === 0) {
        tally.serverErrors[answer.status] = (tally.serverErrors[answer.status] ?? 0) + 1;
        const code = codeOf(answer.body);
        tally.serverErrorsByCode[code] = (tally.serverErrorsByCode[code] ?? 0) + 1;
        if (tally.errorSamples.length < 5) tally.errorSamples.push(`${answer.status} ${answer.body.slice(0, 200)}`);
      } else tally.other[answer.status] = (tally.other[answer.status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, buyer));
  return tally;
}

/** The `code` of a JSON error body, or `none`. */
function codeOf(body: string): string {
  try {
    const { code } = JSON.parse(body) as { code?: unknown };
    return typeof code === 'string' ? code : 'none';
  } catch {
    return 'none';
  }
}

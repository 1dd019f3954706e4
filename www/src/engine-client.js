// The page's side of the engine worker (worker.js): at most one job in flight; jobs sent
// meanwhile are merged into one (the newest text, state and bench win; the patterns to check add
// up), so a burst of keystrokes costs one compile, never a queue of stale ones. Jobs, replies and
// their answers are protocol.js's.

/** The pause in typing after which coverage and replay are brought up to date. */
const LATER_MS = 150;

export class EngineClient {
  /**
   * @param {(reply: import('./protocol.js').Reply, job: import('./protocol.js').Job & { shown?: boolean }) => void} onReply
   *   called with each reply and its job
   */
  constructor(onReply) {
    this.onReply = onReply;
    this.worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
    this.worker.onmessage = ({ data }) => this.receive(data);
    this.worker.onerror = (e) => this.onReply({ aside: true, answers: [{ kind: 'fatal', message: `The engine worker failed: ${e.message || 'unknown error'}` }] }, {});
    this.seq = 0;
    this.inFlight = null;
    this.pending = null;
    this.idleWaiters = [];
    this.later = null; // the timer of the follow-up job for coverage and replay
  }

  /**
   * Resolves once every job sent so far has been answered and its answer handled (the follow-up
   * for coverage and replay included).
   */
  idle() {
    if (!this.inFlight && !this.pending && !this.later) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Queues a job.
   * @param {import('./protocol.js').Job} job
   */
  send(job) {
    if (this.later && !job.asCode) {
      // Typing goes on: the follow-up waits for the next pause.
      clearTimeout(this.later);
      this.later = null;
    }
    const merged = { ...this.pending, ...job, force: Boolean(this.pending?.force || job.force) };
    if (this.pending?.patterns && job.patterns) merged.patterns = [...this.pending.patterns, ...job.patterns];
    merged.sentAt = Math.min(this.pending?.sentAt ?? Infinity, job.sentAt ?? performance.now());
    this.pending = merged;
    if (!this.inFlight) this.flush();
  }

  flush() {
    if (!this.pending) return;
    const job = { ...this.pending, seq: ++this.seq };
    this.pending = null;
    this.inFlight = job;
    this.worker.postMessage(job);
  }

  /** @param {import('./protocol.js').Reply} reply */
  receive(reply) {
    if (reply.aside) {
      this.onReply(reply, {});
      return;
    }
    const job = this.inFlight ?? {};
    if (reply.partial) {
      // The preview of a new compile, ahead of the rest of the reply.
      this.onReply(reply, job);
      return;
    }
    this.inFlight = null;
    // Send what queued up first, so the worker computes while the page renders this reply.
    this.flush();
    this.onReply(reply, job);
    if (reply.later && !this.inFlight && !this.pending) {
      // Coverage and replay of this engine are still to come (as-code.js): asked for once
      // typing pauses, so that they never hold up the next keystroke's preview.
      clearTimeout(this.later);
      this.later = setTimeout(() => {
        this.later = null;
        this.send({ asCode: true });
      }, LATER_MS);
    }
    if (!this.inFlight && !this.pending && !this.later) {
      for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }
}

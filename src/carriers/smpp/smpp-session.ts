import type { Logger } from 'pino';
import smpp, { type PDU, type Session } from 'smpp';
import type { SmppConfig } from '../../config.js';
import { CarrierUnavailableError } from '../carrier.js';
import { backoffMs, type SmppErrorCounts, STATUS, statusName } from './smpp-status.js';

export type BindState = 'connecting' | 'bound' | 'disconnected' | 'bind_failed' | 'stopped';

export type SmppSessionOptions = Pick<
  SmppConfig,
  | 'host'
  | 'port'
  | 'tls'
  | 'systemId'
  | 'password'
  | 'systemType'
  | 'enquireLinkMs'
  | 'responseTimeoutMs'
  | 'reconnectMs'
>;

const INTERFACE_VERSION_34 = 0x34;

/**
 * How many times the event loop reads its sockets between a response timer firing and the
 * request being given up. A process stalled past the timeout (a busy event loop) runs its due
 * timers before it reads the answers that came in meanwhile: the first read takes an answer
 * already received, the second one an SMSC that was stalled with it (a loopback SMSC in the same
 * process) wrote during the first. Taking such an answer for silence dropped the session and
 * sent the part again to an SMSC that had taken it.
 */
const POLLS_BEFORE_SILENCE = 2;

/** Runs `then` after the event loop has polled for I/O `polls` more times (a setImmediate runs after each poll). */
function afterPolls(polls: number, then: () => void): void {
  if (polls === 0) then();
  else setImmediate(() => afterPolls(polls - 1, then));
}

interface PendingRequest {
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * The connection to the SMSC, bound as a transceiver: binds, keeps the link alive with
 * enquire_link, treats an SMSC that stops answering as gone, and connects again with a growing
 * pause after every loss. Each deliver_sm is answered once `deliver` has dealt with it, or with
 * ESME_RX_T_APPN (deliver again later) when it failed.
 */
export class SmppSession {
  state: BindState = 'disconnected';
  lastError: string | null = null;
  private session: Session | null = null;
  private stopping = false;
  private reconnectAttempts = 0;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private enquireTimer: NodeJS.Timeout | null = null;
  private readonly pending = new Set<PendingRequest>();
  private readonly bindWaiters = new Set<(bound: boolean) => void>();

  constructor(
    private readonly options: SmppSessionOptions,
    private readonly logger: Logger,
    private readonly errors: SmppErrorCounts,
    private readonly handlers: { deliver(pdu: PDU): Promise<void>; stateChanged(state: BindState): void },
  ) {}

  /** Starts binding and keeps trying in the background. */
  open(): void {
    this.stopping = false;
    this.connect();
  }

  /** Unbinds politely when bound, then closes the connection and stops reconnecting. */
  async close(): Promise<void> {
    this.stopping = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    const session = this.session;
    if (session) {
      if (this.state === 'bound') await this.request(session, new smpp.PDU('unbind')).catch(() => undefined);
      await new Promise<void>((resolve) => {
        session.once('close', () => resolve());
        session.close();
        setTimeout(() => session.destroy(), this.options.responseTimeoutMs).unref();
      });
    }
    this.setState('stopped');
  }

  /** True once bound; false when the attempt under way fails, after `timeoutMs`, or at once if none is under way. */
  waitForBind(timeoutMs: number): Promise<boolean> {
    if (this.state === 'bound') return Promise.resolve(true);
    if (this.state !== 'connecting') return Promise.resolve(false);
    return new Promise((resolve) => {
      const settle = (bound: boolean) => {
        clearTimeout(timer);
        this.bindWaiters.delete(settle);
        resolve(bound);
      };
      const timer = setTimeout(() => settle(false), timeoutMs);
      this.bindWaiters.add(settle);
    });
  }

  /** A request on the bound connection; CarrierUnavailableError when there is none. */
  requestBound(pdu: PDU): Promise<PDU> {
    if (this.state !== 'bound' || !this.session)
      throw new CarrierUnavailableError(`SMSC not bound (${this.state})`);
    return this.request(this.session, pdu);
  }

  /** Sends a request and waits for its response; a lost connection or a silent SMSC rejects it. */
  private request(session: Session, pdu: PDU): Promise<PDU> {
    return new Promise<PDU>((resolve, reject) => {
      const entry: PendingRequest = {
        reject,
        timer: setTimeout(
          () => afterPolls(POLLS_BEFORE_SILENCE, () => this.timedOut(session, pdu, entry)),
          this.options.responseTimeoutMs,
        ),
      };
      this.pending.add(entry);
      const sent = session.send(pdu, (response) => {
        clearTimeout(entry.timer);
        this.pending.delete(entry);
        resolve(response);
      });
      if (!sent) {
        clearTimeout(entry.timer);
        this.pending.delete(entry);
        reject(new CarrierUnavailableError('the SMSC connection is closed'));
      }
    });
  }

  /**
   * A request whose response did not come in time. The SMSC's silence is what drops the
   * connection and makes the submit's outcome unknown, so the resubmit that follows must be
   * for an answer that truly never came: one already read since the timer fired is kept.
   */
  private timedOut(session: Session, pdu: PDU, entry: PendingRequest): void {
    if (!this.pending.delete(entry)) return;
    const why = `no ${pdu.command}_resp within ${this.options.responseTimeoutMs} ms`;
    this.errors.responseTimeouts += 1;
    entry.reject(new CarrierUnavailableError(why, true));
    // An SMSC that stops answering is treated as gone: the connection is made again.
    this.dropSession(session, why);
  }

  private connect(): void {
    if (this.stopping) return;
    // After a refused bind the state stays bind_failed until a bind succeeds: that is what operators need to see.
    if (this.state !== 'bind_failed') this.setState('connecting');
    const { host, port, tls } = this.options;
    const session = smpp.connect({ host, port, tls }, () => void this.bind(session));
    this.session = session;
    const connectTimer = setTimeout(
      () =>
        afterPolls(POLLS_BEFORE_SILENCE, () => {
          if (this.session === session && this.state !== 'bound')
            this.dropSession(session, `no bind within ${this.options.responseTimeoutMs} ms`);
        }),
      this.options.responseTimeoutMs * 2,
    );
    session.on('error', (error) => {
      this.lastError = error.message;
      this.logger.warn({ err: error, host, port }, 'SMPP connection error');
    });
    session.on('close', () => {
      clearTimeout(connectTimer);
      this.onClose(session);
    });
    session.on('deliver_sm', (pdu) => void this.onDeliver(session, pdu));
    session.on('enquire_link', (pdu) => void session.send(pdu.response()));
    session.on('unbind', (pdu) => {
      session.send(pdu.response());
      session.close();
    });
  }

  private async bind(session: Session): Promise<void> {
    const { systemId, password, systemType, host, port } = this.options;
    let response: PDU;
    try {
      response = await this.request(
        session,
        new smpp.PDU('bind_transceiver', {
          system_id: systemId,
          password,
          system_type: systemType,
          interface_version: INTERFACE_VERSION_34,
        }),
      );
    } catch {
      return;
    }
    if (response.command_status !== STATUS.ESME_ROK) {
      this.errors.bindFailures += 1;
      this.lastError = `bind refused: ${statusName(response.command_status)}`;
      this.setState('bind_failed');
      session.close();
      return;
    }
    this.reconnectAttempts = 0;
    this.lastError = null;
    this.logger.info({ host, port, systemId }, 'bound to the SMSC as a transceiver');
    this.setState('bound');
    this.enquireTimer = setInterval(() => {
      this.request(session, new smpp.PDU('enquire_link')).catch(() => undefined);
    }, this.options.enquireLinkMs);
  }

  private async onDeliver(session: Session, pdu: PDU): Promise<void> {
    try {
      await this.handlers.deliver(pdu);
      session.send(pdu.response());
    } catch (error) {
      this.logger.error({ err: error }, 'deliver_sm could not be stored; the SMSC is asked to retry');
      session.send(pdu.response({ command_status: STATUS.ESME_RX_T_APPN }));
    }
  }

  private dropSession(session: Session, why: string): void {
    if (this.session !== session) return;
    this.lastError = why;
    session.destroy();
  }

  private onClose(session: Session): void {
    if (this.session !== session) return;
    this.session = null;
    if (this.enquireTimer) clearInterval(this.enquireTimer);
    this.enquireTimer = null;
    for (const entry of this.pending) {
      clearTimeout(entry.timer);
      entry.reject(new CarrierUnavailableError('the SMSC connection closed before its response', true));
    }
    this.pending.clear();
    if (this.stopping) return;
    if (this.state === 'bound') {
      this.errors.disconnects += 1;
      this.setState('disconnected');
    } else if (this.state === 'connecting') {
      this.setState('disconnected');
    }
    const delay = backoffMs(this.options.reconnectMs, this.reconnectAttempts);
    this.reconnectAttempts += 1;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.connect();
    }, delay);
  }

  private setState(state: BindState): void {
    if (this.state === state) return;
    this.state = state;
    if (state !== 'connecting') for (const settle of this.bindWaiters) settle(state === 'bound');
    this.handlers.stateChanged(state);
  }
}

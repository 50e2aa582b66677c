// What the gateway's memories of other services' records share: they listen to a Redis channel
// on which every change is announced, and may remember a record only while listening. A read may
// be remembered only if no change was heard, and listening did not lapse, while it was under way:
// a change can overtake a read, and an announcement missed while not subscribed is lost.
import type { RedisConnection } from "../../../services/kit/src/redis.ts";
import type { Logger } from "../../../services/kit/src/logger.ts";

export class ChangeListener {
  /** Subscribed: announcements are being heard. */
  listening = false;
  /** Counts the changes heard, so a read that overlapped one is not remembered. */
  private changesHeard = 0;

  /**
   * `subscriber` is a connection in subscriber mode, which several listeners may share. `heard`
   * runs for each announcement on `channel`; `stopped` when listening lapses (everything
   * remembered must then be forgotten); `started` each time listening begins (again).
   */
  constructor(subscriber: RedisConnection, channel: string, logger: Logger, heard: (message: string) => void, stopped: () => void, started?: () => void) {
    const stopListening = () => {
      this.listening = false;
      stopped();
    };
    subscriber.on("message", (from, message) => {
      if (from !== channel) return;
      this.changesHeard++;
      heard(message);
    });
    subscriber.on("close", stopListening);
    subscriber.on("reconnecting", stopListening);
    // ioredis subscribes again after a reconnect; remembering resumes once it has.
    subscriber.on("ready", () => {
      subscriber.subscribe(channel).then(
        () => {
          this.listening = true;
          started?.();
        },
        (error) => logger.warn("could not listen to changes", { channel, error: (error as Error).message }),
      );
    });
    if (subscriber.status === "ready") subscriber.emit("ready");
  }

  /** A change this process made itself: reads under way may predate it, as for one announced. */
  changed(): void {
    this.changesHeard++;
  }

  /** Called as a read starts; its answer when the read ends says whether the result may be remembered. */
  readStarts(): () => boolean {
    const wasListening = this.listening;
    const heard = this.changesHeard;
    return () => wasListening && this.listening && heard === this.changesHeard;
  }
}

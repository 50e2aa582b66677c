// Counters and histograms for the series recorded on every request and call, kept as plain
// numbers and read by prom-client only when it is scraped. prom-client hashes and validates the
// labels on every inc and observe, even through a child made with labels(); on a poll answered
// from the gateway's memory that was most of what metrics cost. Each series is a cell made once
// per label set and kept by its caller; the exposition is prom-client's own (it formats these
// with the registry's default labels, like its built-in metrics).
import client from "prom-client";

type Labels = Record<string, string>;

export interface CounterCell {
  value: number;
}

export interface HistogramCell {
  observe(value: number): void;
}

/** A counter whose series are cells: `cell.value += n` records. */
export class CounterSeries {
  readonly type = "counter";
  readonly aggregator = "sum";
  private readonly cells: { labels: Labels; cell: CounterCell }[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
  ) {
    client.register.registerMetric(this as never);
  }

  /** The series of one label set: make it once and keep it (two cells of one set would both be written). */
  cell(labels: Labels): CounterCell {
    const cell = { value: 0 };
    this.cells.push({ labels, cell });
    return cell;
  }

  get() {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: this.cells.map(({ labels, cell }) => ({ labels, value: cell.value })) };
  }
}

/** A histogram whose series are cells: `cell.observe(seconds)` records. */
export class HistogramSeries {
  readonly type = "histogram";
  readonly aggregator = "sum";
  private readonly cells: { labels: Labels; counts: Float64Array; total: { sum: number; count: number } }[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly buckets: readonly number[],
  ) {
    client.register.registerMetric(this as never);
  }

  /** The series of one label set: make it once and keep it. */
  cell(labels: Labels): HistogramCell {
    const buckets = this.buckets;
    // counts[i]: observations in bucket i alone (le buckets[i]); the last, those above every bucket.
    const counts = new Float64Array(buckets.length + 1);
    const total = { sum: 0, count: 0 };
    this.cells.push({ labels, counts, total });
    return {
      observe(value) {
        let i = 0;
        while (i < buckets.length && value > buckets[i]!) i++;
        counts[i]!++;
        total.sum += value;
        total.count++;
      },
    };
  }

  get() {
    const values: { labels: Labels; value: number; metricName: string }[] = [];
    for (const { labels, counts, total } of this.cells) {
      let cumulative = 0;
      this.buckets.forEach((le, i) => {
        cumulative += counts[i]!;
        values.push({ labels: { le: String(le), ...labels }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { le: "+Inf", ...labels }, value: total.count, metricName: `${this.name}_bucket` });
      values.push({ labels, value: total.sum, metricName: `${this.name}_sum` });
      values.push({ labels, value: total.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

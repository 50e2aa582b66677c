// Word allowances are monthly, by calendar month in UTC.

export function currentPeriod(now = new Date()): string {
  return now.toISOString().slice(0, 7);
}

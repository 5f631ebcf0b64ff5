// Which messages of a stream a consumer takes: its events' subjects, one stream, one filter subject
// (NATS before 2.10 has one per consumer) and the test of a delivered subject against the wanted ones.
import type { EventDefinition } from '../catalog/define.js';
import type { Bus } from './bus.js';
import { streamOfSubject } from './streams.js';

export interface SubjectFilter {
  stream: string;
  filterSubject: string;
  wanted: ReadonlySet<string>;
  wantedSubject(subject: string): boolean;
}

/** Where the consumer's events live (one stream) and how its messages are told from others there. */
export function subjectFilter(bus: Bus, durable: string, events: readonly EventDefinition[]): SubjectFilter {
  const types = events.map((d) => d.type);
  const subjects = [...new Set(types.map((t) => bus.subjectOf(t)))];
  const streams = new Set(subjects.map((s) => streamOfSubject(bus.namespace, s)));
  if (streams.size !== 1) throw new Error(`consumer ${durable} spans streams ${[...streams].join(', ')}`);
  // NATS before 2.10 has one filter subject per consumer: several types share their longest common
  // subject prefix as a wildcard filter, and events of other types under it are acked and skipped
  // (by subject, before decoding: the wildcard may carry far more than this consumer wants).
  const filterSubject = subjects.length === 1 ? subjects[0]! : commonWildcard(subjects);
  // A type published below its source's token (`ext.*.sync.request`) has a wildcard subject.
  const exactSubjects = new Set(subjects.filter((s) => !/(^|\.)[*>](\.|$)/.test(s)));
  const subjectPatterns = subjects.filter((s) => !exactSubjects.has(s));
  return {
    stream: [...streams][0]!,
    filterSubject,
    wanted: new Set(types),
    wantedSubject: (subject) =>
      exactSubjects.has(subject) || subjectPatterns.some((p) => subjectMatches(p, subject)),
  };
}

/** Whether a NATS subject matches a subject pattern (`*` one token, `>` the rest). */
export function subjectMatches(pattern: string, subject: string): boolean {
  const p = pattern.split('.');
  const s = subject.split('.');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i;
    if (i >= s.length || (p[i] !== '*' && p[i] !== s[i])) return false;
  }
  return p.length === s.length;
}

export function commonWildcard(subjects: readonly string[]): string {
  const split = subjects.map((s) => s.split('.'));
  const prefix: string[] = [];
  for (let i = 0; split.every((t) => i < t.length - 1 && t[i] === split[0]![i]); i++)
    prefix.push(split[0]![i]!);
  return [...prefix, '>'].join('.');
}

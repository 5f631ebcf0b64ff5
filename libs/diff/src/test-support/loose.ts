// Test fixtures are Kubernetes objects poked at freely by path; the comparison itself types them.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- fixtures of many shapes
export type Loose = any;

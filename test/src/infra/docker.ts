// Whether testcontainers can be used: only where a Docker engine answers.
import { existsSync } from 'node:fs';

export function dockerAvailable(): boolean {
  if (process.env.DOCKER_HOST) return true;
  return existsSync('/var/run/docker.sock');
}

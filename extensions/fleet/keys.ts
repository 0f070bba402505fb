/**
 * Names in NATS: an agent's key in the placement bucket, and the subjects of the fleet. KV keys allow
 * `[-/_=.a-zA-Z0-9]` and no leading or trailing dot; an agent id of other characters is written as base64url
 * behind a `b64_` prefix (which no plain id is given, since plain ids are kept only when they pass the test).
 */
const PLAIN_KEY = /^[-_=a-zA-Z0-9]+(?:\.[-_=a-zA-Z0-9]+)*$/;

export function placementKey(agentId: string): string {
  if (PLAIN_KEY.test(agentId) && !agentId.startsWith('b64_')) return agentId;
  return `b64_${Buffer.from(agentId, 'utf8').toString('base64url')}`;
}

/** The subject a daemon answers forwarded requests on. */
export function daemonSubject(fleet: string, daemon: string): string {
  return `agt.fleet.${fleet}.daemon.${daemon}`;
}

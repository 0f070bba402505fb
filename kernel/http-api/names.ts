/**
 * The one rule for agent names and the one rule for meta keys, used everywhere they enter: `POST /agents/create`, `PUT
 * /agents/{id}/config`, the agent's `sys_update_config`, agent files at load (through `AgentConfigSchema`, whose `name`
 * is the rule, kernel/agents/config-schema.ts), the meta routes and the agent's meta tools.
 */
import { Type } from 'typebox';
import { AGENT_NAME_PATTERN, MAX_AGENT_NAME_LENGTH } from '../agents/config-schema.js';
import { AgtError } from '@agt/contracts';

const invalidAgentName = (problem: string) => new AgtError('bad_request', problem, { details: { path: '/name' } });

const agentNameRegExp = new RegExp(AGENT_NAME_PATTERN, 'u');
// eslint-disable-next-line no-control-regex
const CONTROL = /[\p{Cc}\u2028\u2029\u202A-\u202E\u2066-\u2069]/u;

/** Why `name` is not a valid agent name, or null: explains the rule `AGENT_NAME_PATTERN` encodes. */
export function agentNameProblem(name: string): string | null {
  if (agentNameRegExp.test(name)) return null;
  if (name.trim() === '') return 'name must not be empty';
  if ([...name].length > MAX_AGENT_NAME_LENGTH) return `name must be at most ${MAX_AGENT_NAME_LENGTH} characters`;
  if (CONTROL.test(name)) return 'name must not contain control characters';
  if (name.trim() !== name) return 'name must not start or end with white space';
  return 'name must contain at least one letter or digit';
}

/** Throws `bad_request` unless `name` is a valid agent name. */
export function assertAgentName(name: string): string {
  const problem = agentNameProblem(name);
  if (problem !== null) throw invalidAgentName(problem);
  return name;
}

/**
 * A meta key: 1-128 characters of ASCII letters, digits and `_ . : @ + -`, starting with a letter, digit
 * or `_`, and no `..` (keys travel in URL paths: no slashes, NUL, spaces or traversal).
 */
export const META_KEY_PATTERN = '^(?!.*\\.\\.)[A-Za-z0-9_][A-Za-z0-9_.:@+-]{0,127}$';

export const MetaKey = Type.String({
  minLength: 1,
  maxLength: 128,
  pattern: META_KEY_PATTERN,
  description: 'meta key: 1-128 of A-Z a-z 0-9 _ . : @ + - (starts with a letter, digit or _; no `..`)',
});

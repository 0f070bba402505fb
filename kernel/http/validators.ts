/**
 * The request validators of every server the daemon opens (the main API and the servers extensions open
 * through `ctx.serverGuards`), compiled once per process and shared, keyed by schema content. Bodies are
 * JSON and typed already: no coercion, and a member the schema does not name is refused, never silently
 * removed (fastify's default Ajv removes it). Query strings, params and headers are text on the wire and
 * are coerced to their schema's types.
 */
import { AjvCompiler } from '@fastify/ajv-compiler';
import type { FastifyInstance } from 'fastify';

const AJV_BASE = { removeAdditional: false, useDefaults: true, allErrors: false } as const;
// The two Ajv instances are made when the first validator is compiled, not at import: each adds its
// meta-schemas when made (~6 ms apiece of the daemon's start); no request is validated before.
let ajvs:
  | { body: ReturnType<ReturnType<typeof AjvCompiler>>; text: ReturnType<ReturnType<typeof AjvCompiler>> }
  | undefined;
function compilers() {
  if (ajvs === undefined) {
    const ajvPool = AjvCompiler();
    ajvs = {
      body: ajvPool({}, { customOptions: { ...AJV_BASE, coerceTypes: false } }),
      text: ajvPool({}, { customOptions: { ...AJV_BASE, coerceTypes: 'array' } }),
    };
  }
  return ajvs;
}
type ValidatorCompiler = Parameters<FastifyInstance['setValidatorCompiler']>[0];
type Validator = ReturnType<ValidatorCompiler>;
const validators = new Map<string, Validator>();

function validatorFor(route: Parameters<ValidatorCompiler>[0]): Validator {
  const body = route.httpPart === 'body';
  const key = `${body ? 'body' : 'text'} ${JSON.stringify(route.schema)}`;
  let validator = validators.get(key);
  if (validator === undefined) {
    validator = (body ? compilers().body : compilers().text)(route as never) as Validator;
    validators.set(key, validator);
  }
  return validator;
}

/**
 * Fastify reads `errors` off the function it was given after a call that answered `false`, and passes
 * the parent object (so Ajv may replace a root value) only to a function with `schemaEnv`, as Ajv's have.
 */
export const compileValidator: ValidatorCompiler = (route) => {
  let compiled: (((data: unknown, context?: unknown) => unknown) & { errors?: unknown }) | undefined;
  const validate = ((data: unknown, context?: unknown) => {
    compiled ??= validatorFor(route) as never;
    const valid = compiled!(data, context);
    validate.errors = compiled!.errors;
    return valid;
  }) as ((data: unknown, context?: unknown) => unknown) & { errors?: unknown; schemaEnv?: unknown };
  validate.schemaEnv = true;
  return validate as Validator;
};

/**
 * The `console` extension: the daemon's own web console at `/console/`, a single page built
 * from `extensions/console/ui/` into `dist/console/` and served here with a strict CSP. It talks to the
 * main API like any client; the browser proves itself with a console session instead of the daemon
 * token, which it never holds:
 *
 * - `agt console` mints a one-time login code (`POST /console/login-codes`, bearer token) and prints the
 *   URL `/console/#code=...`; the page exchanges the code (`POST /console/login`, public, single use,
 *   60 s) for a session, or the person pastes the daemon token once (`POST /console/sessions`, the token
 *   in the Authorization header of that one request, never stored).
 * - The session secret lives in an HttpOnly, SameSite=Strict cookie; this extension offers the kernel's
 *   `agt.request-credentials` point, which accepts that cookie on any API request that also carries the
 *   `X-Agt-Console: 1` header (a cross-site form cannot send it). The Host / Origin / Sec-Fetch-Site
 *   guards run before, on every console request as on every API request.
 * - Sessions persist as digests in `<dataDir>/console/sessions.json` (a restart keeps the browser in).
 * - Sessions are listed (`GET /console/sessions`) and revoked (`DELETE /console/sessions/{id}`, or
 *   `POST /console/logout` for the current one).
 */
import { AgtError } from '@agt/contracts';
import { defineExtension } from '@agt/contracts';
import { ErrorBody } from '@agt/contracts';
import { requestCredentials, type CredentialRequest } from '@agt/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { join } from 'node:path';
import { Type } from 'typebox';
import { ConsoleSessions, cookieValue } from './sessions.js';
import { findUiDir, loadUiFiles, SECURITY_HEADERS } from './static.js';

/** The cookie holding the session secret. */
export const COOKIE = 'agt_console';
/** The header every console API request carries besides the cookie. */
export const CONSOLE_HEADER = 'x-agt-console';

const ConsoleOptions = Type.Object(
  {
    /** Folder of the built UI (index.html, app.js, app.css); default `dist/console/` of the installation. */
    uiDir: Type.Optional(Type.String({ minLength: 1 })),
  },
  { additionalProperties: false },
);

const Session = Type.Object({
  id: Type.String(),
  createdAt: Type.Integer(),
  lastUsedAt: Type.Integer(),
  expiresAt: Type.Integer(),
  via: Type.Union([Type.Literal('code'), Type.Literal('token')]),
  userAgent: Type.Union([Type.String(), Type.Null()]),
  current: Type.Boolean(),
});
const TAG = 'console';
const errors = (...statuses: number[]) =>
  Object.fromEntries([400, 401, 403, ...statuses].map((status) => [status, ErrorBody]));

export default defineExtension({
  name: 'console',
  version: '1.0.0',
  contract: '1.0',
  prefix: '/console',
  routeGroups: [TAG],
  options: ConsoleOptions,
  register(ctx) {
    const sessions = new ConsoleSessions(join(ctx.settings.dataDir, 'console', 'sessions.json'));
    const uiDir = findUiDir(ctx.config.uiDir);
    const files = loadUiFiles(uiDir);
    if (!uiDir)
      ctx.logger.warn('console: no built UI found (npm run build makes dist/console/); /console/ answers 503');

    const sessionOf = (headers: CredentialRequest['headers']) => {
      const value = cookieValue(headers.cookie, COOKIE);
      return value ? sessions.touch(value) : undefined;
    };
    ctx.provide(requestCredentials, {
      accepts: (request) => request.headers[CONSOLE_HEADER] === '1' && sessionOf(request.headers) !== undefined,
    });

    const http = ctx.http;
    http.addHook('onSend', async (_request, reply) => {
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) reply.header(name, value);
    });
    const cookie = (value: string, maxAge: number) =>
      `${COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAge}`;
    const startSession = (request: FastifyRequest, reply: FastifyReply, via: 'code' | 'token') => {
      const opened = sessions.open(
        via,
        typeof request.headers['user-agent'] === 'string' ? request.headers['user-agent'] : null,
      );
      reply.header('set-cookie', cookie(opened.secret, Math.floor((opened.session.expiresAt - Date.now()) / 1000)));
      reply.header('cache-control', 'no-store');
      return { session: { ...opened.session, current: true } };
    };
    const page = (name: string) => (_request: FastifyRequest, reply: FastifyReply) => {
      const file = files.get(name);
      if (!file) {
        const error = new AgtError('unavailable', 'the console UI is not built (npm run build)');
        return reply.status(error.statusCode).send(error.toBody());
      }
      reply.header('cache-control', name === 'index.html' ? 'no-store' : 'no-cache');
      return reply.type(file.type).send(file.body);
    };

    // The page shell: public (it carries no data); a JSON client asking for the prefix gets the listing.
    http.get('/', { config: { public: true }, schema: { hide: true } }, (request, reply) => {
      if (String(request.headers.accept ?? '').includes('text/html')) return page('index.html')(request, reply);
      return reply.send({
        resources: [
          '/console/',
          '/console/assets/{file}',
          '/console/login-codes',
          '/console/login',
          '/console/sessions',
          '/console/logout',
        ],
      });
    });
    http.get('/assets/:file', { config: { public: true }, schema: { hide: true } }, (request, reply) => {
      const name = (request.params as { file: string }).file;
      return files.has(name) && name !== 'index.html'
        ? page(name)(request, reply)
        : reply.status(404).send({ error: 'no such console file', code: 'not_found' });
    });

    http.post(
      '/login-codes',
      {
        schema: {
          tags: [TAG],
          summary: 'A one-time console login code (agt console prints the URL)',
          response: {
            201: Type.Object({ code: Type.String(), path: Type.String(), expiresAt: Type.Integer() }),
            ...errors(),
          },
        },
      },
      async (_request, reply) => {
        const { code, expiresAt } = sessions.mintCode();
        reply.header('cache-control', 'no-store');
        return reply.status(201).send({ code, path: `/console/#code=${code}`, expiresAt });
      },
    );
    http.post(
      '/login',
      {
        config: { public: true },
        schema: {
          tags: [TAG],
          summary: 'Exchange a one-time code for a console session (sets the HttpOnly cookie)',
          body: Type.Object({ code: Type.String({ minLength: 1, maxLength: 200 }) }),
          response: { 200: Type.Object({ session: Session }), ...errors() },
        },
      },
      async (request, reply) => {
        if (!sessions.redeem(request.body.code))
          throw new AgtError('unauthorized', 'the login code is unknown, used or expired: run agt console again');
        ctx.logger.info('console session opened with a one-time code');
        return startSession(request, reply, 'code');
      },
    );
    http.post(
      '/sessions',
      {
        schema: {
          tags: [TAG],
          summary: 'Open a console session with the daemon token (sets the HttpOnly cookie)',
          response: { 200: Type.Object({ session: Session }), ...errors() },
        },
      },
      async (request, reply) => {
        if (!/^Bearer\s/i.test(String(request.headers.authorization ?? '')))
          throw new AgtError('bad_request', 'send the daemon token as Authorization: Bearer');
        ctx.logger.info('console session opened with the daemon token');
        return startSession(request, reply, 'token');
      },
    );
    http.get(
      '/sessions',
      {
        schema: {
          tags: [TAG],
          summary: 'Console sessions (never their secrets)',
          response: { 200: Type.Object({ sessions: Type.Array(Session) }), ...errors() },
        },
      },
      async (request) => {
        const current = sessionOf(request.headers)?.id;
        return { sessions: sessions.list().map((session) => ({ ...session, current: session.id === current })) };
      },
    );
    http.delete(
      '/sessions/:id',
      {
        schema: {
          tags: [TAG],
          summary: 'Revoke a console session',
          params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }),
          response: { 200: Type.Object({ success: Type.Boolean() }), ...errors(404) },
        },
      },
      async (request) => {
        if (!sessions.revoke(request.params.id))
          throw new AgtError('not_found', `no console session ${request.params.id}`);
        return { success: true };
      },
    );
    http.post(
      '/logout',
      {
        schema: {
          tags: [TAG],
          summary: 'End the current console session and clear its cookie',
          response: { 200: Type.Object({ success: Type.Boolean() }), ...errors() },
        },
      },
      async (request, reply) => {
        const current = sessionOf(request.headers);
        reply.header('set-cookie', cookie('', 0));
        return { success: current ? sessions.revoke(current.id) : false };
      },
    );
    return {
      stop: () => {
        try {
          sessions.close();
        } catch (error) {
          ctx.logger.warn({ err: error }, 'console: sessions could not be saved');
        }
      },
    };
  },
});

/**
 * The daemon's version: the API version in `/openapi.json`, `agtd --version` and `daemon.started`. It
 * equals `version` in package.json (a test keeps the two equal), so a release changes both.
 */
export const AGT_VERSION = '0.2.0';

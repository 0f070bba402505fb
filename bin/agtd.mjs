#!/usr/bin/env node
// The daemon is TypeScript run through tsx's loader: no build step, and third-party extensions may be
// TypeScript or JavaScript alike.
import { register } from 'tsx/esm/api';

register();
await import('../kernel/main.ts');

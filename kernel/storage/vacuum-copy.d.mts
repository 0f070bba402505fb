import type Database from 'libsql';

export declare function vacuumCopy<T>(
  DatabaseClass: typeof Database,
  src: string,
  dst: string,
  options: { busyTimeoutMs: number; passing?: boolean },
  inspect: (copy: Database.Database) => T,
): T;

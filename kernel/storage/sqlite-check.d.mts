import type Database from 'libsql';

export interface SqliteCheckResult {
  integrity: string;
  schemaVersion: number;
  marker: boolean;
}

export declare function check(db: Database.Database): SqliteCheckResult;

export declare function verify(DatabaseClass: typeof Database, path: string, busyTimeoutMs: number): SqliteCheckResult;

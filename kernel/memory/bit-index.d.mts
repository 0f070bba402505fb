export declare const bitBytes: (dims: number) => number;
export declare class BitIndex {
  constructor(bytes: number);
  readonly live: number;
  set(id: number, blob: Uint8Array): void;
  remove(id: number): void;
  nearest(query: Uint8Array, k: number): number[];
}

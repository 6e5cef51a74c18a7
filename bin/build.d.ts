// Types of bin/build.js (plain JavaScript, run by node before anything is compiled).
export declare const ROOT: string;
export declare const DIST_ENTRY: string;
export declare function buildIsStale(): boolean;
export declare function build(lenient?: boolean): number;

export declare const BUILD_BASE_PATH: string;
export declare function normaliseBasePath(value: unknown): string | null;

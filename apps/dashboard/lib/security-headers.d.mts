export declare function securityHeaders(params?: { development?: boolean }): Record<string, string>;

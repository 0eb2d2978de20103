export declare function securityHeaders(params?: { development?: boolean; nonce?: string }): Record<string, string>;
export declare function makeNonce(): string;

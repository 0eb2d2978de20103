export declare function hashPassword(password: string): Promise<string>;
export declare function isPasswordHash(hash: unknown): hash is string;
export declare function verifyPassword(password: string, hash: string): Promise<boolean>;

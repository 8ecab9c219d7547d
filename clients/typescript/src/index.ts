// The SDK's public surface: the generated client and models, and the retry/polling layer on top.
export * from './generated/index.js';
export * from './retry.js';
export * from './signature.js';

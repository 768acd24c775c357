export * from '../../lib/testing/multi-key-load.js';

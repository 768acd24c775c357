export * from '../../lib/testing/observed-backend.js';

export { nextEvent } from '../../lib/testing/next-event.js';

// `npm run down`: stops everything `npm run up` started and removes its state under .capstan/
// except the logs. The demo database (capstan_demo) and bus namespace stay for inspection until
// the next `npm run up` replaces them.
import { paths } from './stack.js';
import { removeState, stopStack } from './teardown.js';

const stopped = await stopStack();
removeState();
console.log(
  stopped.length > 0
    ? `capstan down: stopped ${stopped.join(', ')}; state removed, logs kept in ${paths.logs}`
    : `capstan down: nothing was running; state removed, logs kept in ${paths.logs}`,
);

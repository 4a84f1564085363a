// Issue 14, family 3 (timer chains): on each line, awaits N timers of MS
// milliseconds one after the other, then answers. Between the timers node
// waits in epoll on its terminal (readline) with the timer's timeout.
//
//     node timer_chain.js [N] [MS]   (default 6 x 400 ms)
//
// Prompts `chain> `; answers each line with `ANSWER-<line>`.
const readline = require('readline');

const n = Number(process.argv[2] || 6);
const ms = Number(process.argv[3] || 400);
const sleep = (t) => new Promise((resolve) => setTimeout(resolve, t));
const rl = readline.createInterface({
  input: process.stdin,
  output: process.stdout,
  prompt: 'chain> ',
});
rl.on('line', async (line) => {
  for (let i = 0; i < n; i++) await sleep(ms);
  console.log(`ANSWER-${line.trim()}`);
  rl.prompt();
});
rl.on('close', () => process.exit(0));
rl.prompt();

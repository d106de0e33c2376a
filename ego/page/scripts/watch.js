// The watching half of wait_for.js and wait_text.js: calls found() on every DOM change in the
// document and in each open shadow root (observing new roots as they appear), and every 250 ms
// for a root no change announced; resolves true when it holds, false after ms milliseconds.
const observed = new Set();
const done = (value) => { observer.disconnect(); clearTimeout(timer); clearInterval(slow); resolve(value); };
const check = () => {
  for (const root of dom.roots(true)) {
    if (!observed.has(root)) { observed.add(root); observer.observe(root, { childList: true, subtree: true, characterData: true, attributes: true }); }
  }
  if (found()) done(true);
};
const observer = new MutationObserver(check);
const slow = setInterval(check, 250);
const timer = setTimeout(() => done(found()), ms);
check();

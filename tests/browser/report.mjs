// `aura report`'s page in a real headless browser driven by playwright-core (tests/all/report.rs
// runs this): the chromium given, or else @sparticuz/chromium's build (pinned in this
// package's lock, unpacked under $TMPDIR) with the package's own launch arguments. Loads the
// page from file://, with the network off, and prints one JSON object: console errors and page
// errors, the marks per lane, what a click on the first mark shows, and where the screenshot
// went.
//
//   node report.mjs <report.html> <screenshot.png> [chromium]

import { chromium } from 'playwright-core';

const [page_path, screenshot, executable] = process.argv.slice(2);
const launch = executable
    ? { executablePath: executable, args: ['--no-sandbox'] }
    : await (async () => {
          const packaged = (await import('@sparticuz/chromium')).default;
          return { executablePath: await packaged.executablePath(), args: packaged.args };
      })();
const browser = await chromium.launch(launch);
try {
    const context = await browser.newContext({ offline: true, viewport: { width: 1400, height: 1000 } });
    const page = await context.newPage();
    const errors = [];
    const requests = [];
    page.on('console', (message) => {
        if (message.type() === 'error' || message.type() === 'warning') errors.push(`${message.type()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
    page.on('request', (request) => {
        if (!request.url().startsWith('file://')) requests.push(request.url());
    });
    await page.goto(`file://${page_path}`, { waitUntil: 'load' });
    const lanes = await page.$$eval('.lane', (lanes) =>
        Object.fromEntries(lanes.map((lane) => [lane.querySelector('.lane-name').textContent, lane.querySelectorAll('.mark').length])),
    );
    const marks = await page.$$eval('.mark', (marks) => marks.map((m) => m.dataset.trace));
    let clicked = null;
    if (marks.length) {
        await page.click('.mark');
        clicked = await page.textContent('#details');
    }
    const quarantine_rows = await page.$$eval('#quarantine tbody tr', (rows) => rows.map((r) => r.textContent));
    const fuel_bars = await page.$$eval('#fuel .bar', (bars) => bars.length);
    const title = await page.title();
    await page.screenshot({ path: screenshot, fullPage: true });
    console.log(JSON.stringify({ title, errors, requests, lanes, marks, clicked, quarantine_rows, fuel_bars }));
} finally {
    await browser.close();
}

// End-to-end test of the web catalog at `/` in headless Chromium, driven by playwright-core
// with real clicks and key presses. Run by tests/web.rs:
//
//   $SKILLREG_NODE22 tests/web/catalog.mjs --url http://127.0.0.1:PORT --screenshot PATH
//
// The server must hold the real corpus in namespace `corpus` and the hostile skill
// `acme/hostile` (see tests/web.rs). The browser is $SKILLREG_CHROMIUM (default
// /usr/bin/chromium, Debian's package; playwright-core never downloads one). Prints one JSON
// object with what was checked; exits 1 with a message on stderr at the first failure (and
// then leaves a screenshot of the page it was on at PATH with `.failure.png` in place of `.png`).

import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import { importTool } from '../clients/_tools.mjs';

const { values: args } = parseArgs({
    options: {
        url: { type: 'string' },
        screenshot: { type: 'string' },
        chromium: { type: 'string', default: process.env.SKILLREG_CHROMIUM || '/usr/bin/chromium' },
    },
});
if (!args.url || !args.screenshot) {
    console.error('usage: catalog.mjs --url http://127.0.0.1:PORT --screenshot PATH [--chromium PATH]');
    process.exit(2);
}
const base = args.url.replace(/\/+$/, '');
const QUERY = 'draft a conventional commit message';
// The flags Debian's Chromium needs on this closed network (see the report in tests/web.rs).
const CHROMIUM_FLAGS = [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
];

class CheckFailed extends Error {}
function check(condition, message, detail) {
    if (!condition) {
        throw new CheckFailed(detail === undefined ? message : `${message}: ${JSON.stringify(detail)}`);
    }
}

const report = { url: base, browser: null, catalog: {}, search: {}, skill: {}, copy: {}, hostile: {}, screenshot: null };
const pageErrors = [];

const { chromium } = await importTool('playwright-core');
const profile = mkdtempSync(join(tmpdir(), 'skillreg-web-chromium-'));
let context;
let page;
try {
    // A persistent context over a fresh, empty profile: Playwright refuses --user-data-dir in
    // `args` and takes it as the first argument here instead.
    context = await chromium.launchPersistentContext(profile, {
        executablePath: args.chromium,
        headless: true,
        chromiumSandbox: false,
        args: CHROMIUM_FLAGS,
        viewport: { width: 1280, height: 800 },
        permissions: ['clipboard-read', 'clipboard-write'],
        timeout: 60_000,
    });
    report.browser = context.browser()?.version() ?? null;
    page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(15_000);
    page.on('pageerror', (e) => pageErrors.push(`${page.url()}: ${e.message}`));
    page.on('dialog', (d) => {
        pageErrors.push(`${page.url()}: unexpected ${d.type()} dialog: ${d.message()}`);
        d.dismiss().catch(() => {});
    });
    const goto = async (path) => {
        const resp = await page.goto(base + path);
        check(resp && resp.ok(), `GET ${path} answered ${resp?.status()}`);
        return resp;
    };
    const linkTexts = () => page.locator('a.skill-link').allTextContents();

    // ---------------------------------------------------------------- catalog
    await goto('/');
    check((await page.title()).includes('skillreg'), 'the catalog page has a skillreg title', await page.title());
    const firstPage = await page.locator('#catalog a.skill-link').allTextContents();
    check(firstPage.length > 0, 'the catalog at / lists skills');
    check(
        firstPage.every((t) => /^[a-z0-9-]+\/[a-z0-9-]+$/.test(t.trim())),
        'every catalog link reads namespace/name',
        firstPage.slice(0, 5)
    );
    report.catalog.first_page = firstPage.length;
    report.catalog.first = firstPage[0];
    // acme/hostile sorts first; its description carries markup that must stay text.
    const hostileCard = page.locator('#catalog .card', { has: page.locator('a.skill-link', { hasText: 'acme/hostile' }) });
    check((await hostileCard.count()) === 1, 'the catalog lists acme/hostile');
    const cardText = (await hostileCard.textContent()) ?? '';
    const cardElements = await page.locator('#catalog img, #catalog b, #catalog [onerror]').count();
    check(cardText.includes('<img src=x onerror="window.__pwned=4">') && cardElements === 0, 'markup in a description is shown as text', cardText);
    report.catalog.description_markup_escaped = true;
    // The catalog spans several pages: follow `a#next` with a click.
    const next = page.locator('a#next');
    check((await next.count()) === 1, 'the first catalog page links to the next one (a#next)');
    await Promise.all([page.waitForURL(/[?&]cursor=/), next.click()]);
    const secondPage = await page.locator('#catalog a.skill-link').allTextContents();
    check(secondPage.length > 0, 'the second catalog page lists skills');
    check(!secondPage.some((t) => firstPage.includes(t)), 'the second page repeats no skill of the first', secondPage.slice(0, 5));
    report.catalog.second_page = secondPage.length;
    report.catalog.next_clicked = true;

    // ----------------------------------------------------------------- search
    await goto('/');
    const q = page.locator('form.search input#q');
    await q.click();
    await q.pressSequentially(QUERY);
    await Promise.all([page.waitForURL(/[?&]q=/), q.press('Enter')]);
    check(new URL(page.url()).searchParams.get('q') === QUERY, 'Enter submits the typed query', page.url());
    check((await page.locator('input#q').inputValue()) === QUERY, 'the results page keeps the query in #q');
    const results = await linkTexts();
    check(results.length > 0, `searching "${QUERY}" gives results`);
    const resultsLine = (await page.locator('#results').textContent())?.trim();
    report.search = { query: QUERY, results: results.length, first: results[0], top: results.slice(0, 5), line: resultsLine };
    check(results[0] === 'corpus/commit', 'the first result is corpus/commit', results.slice(0, 5));

    // ------------------------------------------------------------ skill page
    await Promise.all([page.waitForURL(/\/skills\/corpus\/commit$/), page.locator('a.skill-link').first().click()]);
    const title = (await page.locator('h1#skill-title').textContent())?.trim();
    check(title === 'corpus/commit', 'h1#skill-title is corpus/commit', title);
    const article = page.locator('article#skill-md');
    const headings = await article.locator('h1, h2').allTextContents();
    check(headings.length > 0, 'article#skill-md holds a rendered h1 or h2 heading');
    const articleText = (await article.textContent()) ?? '';
    check(!/^---\s*$/m.test(articleText.slice(0, 20)) && !articleText.includes('name: commit'), 'the frontmatter is not rendered');
    const versionRows = await page.locator('table#versions tr:has(td)').count();
    check(versionRows >= 1, 'table#versions has a version row');
    const versions = await page.locator('table#versions tr:has(td) td:first-child').allTextContents();
    const fileRows = await page.locator('table#files tr:has(td) td:first-child').allTextContents();
    check(fileRows.includes('SKILL.md'), 'table#files lists SKILL.md', fileRows);
    report.skill = {
        title,
        headings: headings.slice(0, 5),
        versions,
        files: fileRows,
        code_blocks: await article.locator('pre code').count(),
    };

    // ------------------------------------------------------------- copy URI
    const uri = (await page.locator('code#skill-uri').textContent())?.trim();
    check(uri === 'skill://corpus/commit/SKILL.md', 'code#skill-uri shows the current SKILL.md URI', uri);
    const copy = page.locator('button#copy-uri');
    check((await copy.getAttribute('data-copied')) === null, 'button#copy-uri starts without data-copied');
    await copy.click();
    await page.waitForSelector('button#copy-uri[data-copied="true"]', { timeout: 5_000 }).catch(() => {});
    const copied = await copy.getAttribute('data-copied');
    check(copied === 'true', 'clicking button#copy-uri sets data-copied="true"', copied);
    const clipboard = await page.evaluate(() => navigator.clipboard.readText().catch((e) => `error: ${e}`));
    report.copy = { uri, data_copied: copied, label: (await copy.textContent())?.trim(), clipboard };
    check(clipboard === uri, 'the clipboard holds the skill URI after the click', clipboard);

    await page.screenshot({ path: args.screenshot, fullPage: true });
    report.screenshot = { path: args.screenshot, bytes: statSync(args.screenshot).size };

    // ----------------------------------------------------- hostile SKILL.md
    await goto('/skills/acme/hostile');
    check((await page.locator('h1#skill-title').textContent())?.trim() === 'acme/hostile', 'the hostile skill page opens');
    const hostile = page.locator('article#skill-md');
    const hostileText = (await hostile.textContent()) ?? '';
    // Raw HTML is shown as text: present, but never parsed into elements.
    check(hostileText.includes('<script>window.__pwned = 1</script>'), 'the <script> tag is shown as text', hostileText);
    check(hostileText.includes('onerror="window.__pwned=2"'), 'the <img onerror> tag is shown as text', hostileText);
    const link = hostile.locator('a', { hasText: /^x$/ });
    check((await link.count()) === 1, 'the [x](javascript:…) link is rendered as a link');
    const neutralisedHref = await link.getAttribute('href');
    await link.click();
    await page.waitForTimeout(300);
    const pwned = await page.evaluate(() => (typeof window.__pwned === 'undefined' ? null : String(window.__pwned)));
    const counts = await page.evaluate(() => ({
        scripts_in_article: document.querySelectorAll('article#skill-md script').length,
        onerror_images_in_article: document.querySelectorAll('article#skill-md img[onerror]').length,
        onerror_anywhere: document.querySelectorAll('[onerror]').length,
        javascript_hrefs: [...document.querySelectorAll('a[href]')]
            .map((a) => a.getAttribute('href'))
            .filter((h) => /^\s*javascript:/i.test(h)),
    }));
    report.hostile = { link_href: neutralisedHref, url_after_click: page.url(), pwned, ...counts };
    check(pwned === null, 'window.__pwned stays undefined after loading the page and clicking the link', pwned);
    check(counts.scripts_in_article === 0, 'article#skill-md holds no script element', counts);
    check(counts.onerror_images_in_article === 0 && counts.onerror_anywhere === 0, 'no element carries onerror', counts);
    check(counts.javascript_hrefs.length === 0, 'no anchor href starts with javascript:', counts.javascript_hrefs);
    check(page.url().startsWith(`${base}/skills/acme/hostile`), 'the neutralised link stays on the page', page.url());

    check(pageErrors.length === 0, 'no script error or dialog on any page', pageErrors);
    console.log(JSON.stringify({ ok: true, ...report, page_errors: pageErrors }));
} catch (e) {
    const message = e instanceof CheckFailed ? e.message : e?.stack || String(e);
    let failureShot = null;
    if (page) {
        failureShot = args.screenshot.replace(/(\.png)?$/i, '.failure.png');
        await page.screenshot({ path: failureShot, fullPage: true }).catch(() => (failureShot = null));
    }
    console.log(
        JSON.stringify({ ok: false, failure: message, at: page?.url() ?? null, failure_screenshot: failureShot, ...report, page_errors: pageErrors })
    );
    console.error(`web catalog check failed: ${message}`);
    if (/Executable doesn't exist|ENOENT|Failed to launch/i.test(message)) {
        console.error(`Chromium at ${args.chromium} did not start: run scripts/install-test-tools.sh (it installs Debian's chromium)`);
    }
    process.exitCode = 1;
} finally {
    await context?.close().catch(() => {});
    rmSync(profile, { recursive: true, force: true });
}

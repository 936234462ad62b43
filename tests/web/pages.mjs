// Every page type of the web catalog at a desktop and a phone width, in headless Chromium driven
// by playwright-core: axe-core's accessibility rules run in each page (injected; zero serious or
// critical violations allowed), each page is checked for what it shows (text present, elements
// visible within the viewport, no horizontal overflow) and a full-page screenshot is saved.
// Run by tests/integration/web.rs:
//
//   $SKILLREG_NODE22 tests/web/pages.mjs --url http://127.0.0.1:PORT --out DIR
//
// The server must hold the skills tests/integration/web.rs publishes for it (acme/hello 1.0.0
// and 1.1.0, acme/flagged). Prints one JSON object: per page and width, the axe violations
// (serious and critical), the checks that failed, and the screenshot's path. Exits 1 when any
// page failed anything.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import { importTool, nodeModules } from '../clients/_tools.mjs';

const { values: args } = parseArgs({
    options: {
        url: { type: 'string' },
        out: { type: 'string' },
        chromium: { type: 'string', default: process.env.SKILLREG_CHROMIUM || '/usr/bin/chromium' },
    },
});
if (!args.url || !args.out) {
    console.error('usage: pages.mjs --url http://127.0.0.1:PORT --out DIR [--chromium PATH]');
    process.exit(2);
}
const base = args.url.replace(/\/+$/, '');
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
const WIDTHS = [
    { name: 'desktop', width: 1280, height: 800 },
    { name: 'phone', width: 390, height: 844 },
];
const axeSource = readFileSync(join(nodeModules, 'axe-core', 'axe.min.js'), 'utf8');

/** Whether `locator`'s first element is visible and lies within the viewport's width. */
async function inView(page, locator, width) {
    const el = locator.first();
    if (!(await el.isVisible())) return false;
    const box = await el.boundingBox();
    return box !== null && box.x >= 0 && box.x + box.width <= width + 1;
}

// Each page type: its path, the status it answers, and what it must show.
const PAGES = [
    {
        name: 'catalog',
        path: '/',
        checks: async (page, width) => ({
            cards: (await page.locator('#catalog a.skill-link').count()) >= 2,
            verdict_badge: (await page.locator('#catalog .card .badge.clean, #catalog .card .badge.flagged').count()) >= 2,
            range_line: /^Skills 1–(\d+) of \1$/.test(((await page.locator('#range').textContent()) ?? '').trim()),
            facet_counts: ((await page.locator('select#f-verdict option[value="flagged"]').textContent()) ?? '').trim() === 'Flagged (1)'
                && ((await page.locator('select#f-source option[value="upload"]').textContent()) ?? '').trim() === 'Published directly (3)',
            filters_visible: await inView(page, page.locator('form.filters select#f-sort'), width),
            search_visible: await inView(page, page.locator('input#q'), width),
        }),
    },
    {
        name: 'catalog-recent',
        path: '/?sort=recent&verdict=flagged',
        checks: async (page) => ({
            only_flagged: (await page.locator('#catalog a.skill-link').allTextContents()).join(',') === 'acme/flagged',
            sort_kept: (await page.locator('select#f-sort').inputValue()) === 'recent',
            clear_link: (await page.locator('a#clear').count()) === 1,
        }),
    },
    {
        name: 'search',
        path: '/?q=greeting',
        checks: async (page, width) => ({
            first_hit: ((await page.locator('#hits a.skill-link').first().textContent()) ?? '').trim() === 'acme/hello',
            verdict_badge: (await page.locator('#hits .card').first().locator('.badge.clean').count()) === 1,
            marked: (await page.locator('#hits mark').count()) >= 1 && /greeting/i.test((await page.locator('#hits mark').first().textContent()) ?? ''),
            results_line: ((await page.locator('#results').textContent()) ?? '').includes('for “greeting”'),
            hit_visible: await inView(page, page.locator('#hits .card'), width),
        }),
    },
    {
        name: 'search-empty',
        path: '/?q=zyxwvut%20qqqq',
        checks: async (page) => ({
            says_none: ((await page.locator('#empty').textContent()) ?? '').includes('No skill matches'),
            suggests: (await page.locator('#suggestions a').count()) >= 2,
        }),
    },
    {
        name: 'skill',
        path: '/skills/acme/hello',
        checks: async (page, width) => ({
            title: ((await page.locator('h1#skill-title').textContent()) ?? '').trim() === 'acme/hello',
            install_skillreg: ((await page.locator('#install-skillreg').textContent()) ?? '').startsWith('skillreg add acme/hello --from http'),
            install_npx: ((await page.locator('#install-npx').textContent()) ?? '').endsWith('/s/acme/hello'),
            install_clawhub: ((await page.locator('#install-clawhub').textContent()) ?? '').endsWith('install acme/hello'),
            install_visible: await inView(page, page.locator('#install-skillreg'), width),
            current_version: ((await page.locator('table#versions').textContent()) ?? '').includes('current'),
            compare_form: (await page.locator('form#compare select#diff-from').inputValue()) === '1.0.0',
            file_link: (await page.locator('table#files a[href="/skills/acme/hello/1.1.0/files/references/guide.md"]').count()) === 1,
            rendered_md: (await page.locator('article#skill-md h1').count()) === 1,
            relative_link: (await page.locator('article#skill-md a[href="/skills/acme/hello/1.1.0/files/references/guide.md?view=rendered"]').count()) === 1,
            required_by: (await page.locator('#required-by a[href="/skills/acme/greeter"]').count()) === 1,
        }),
    },
    {
        name: 'skill-findings',
        path: '/skills/acme/flagged',
        checks: async (page) => ({
            flagged: (await page.locator('.badge.flagged').count()) >= 1,
            finding_links_a_line: (await page.locator('table#findings a[href$="/files/SKILL.md#L6"]').count()) === 1,
        }),
    },
    {
        name: 'file',
        path: '/skills/acme/hello/1.1.0/files/references/guide.md#L7',
        checks: async (page, width) => {
            const lines = await page.locator('#file .line').count();
            const blank = await page.locator('#L2').boundingBox();
            const first = await page.locator('#L1').boundingBox();
            const long = await page.locator('#L7').boundingBox();
            return {
                every_line: lines === 8,
                numbers: (await page.locator('#L3 a.ln').getAttribute('href')) === '#L3',
                blank_line_kept: blank !== null && first !== null && blank.height >= first.height * 0.9 && blank.y > first.y,
                long_line_wraps: long !== null && first !== null && long.height > first.height * 1.5 && long.x + long.width <= width + 1,
                target_in_view: await page.locator('#L7').evaluate((el) => {
                    const r = el.getBoundingClientRect();
                    return r.top < window.innerHeight && r.bottom > 0 && el.matches(':target');
                }),
                rendered_link: (await page.locator('a#view-rendered').count()) === 1,
            };
        },
    },
    {
        name: 'file-rendered',
        path: '/skills/acme/hello/1.1.0/files/references/guide.md?view=rendered',
        checks: async (page) => ({
            heading: ((await page.locator('article#rendered h1').textContent()) ?? '').trim() === 'Guide',
            raw_html_as_text: ((await page.locator('article#rendered').textContent()) ?? '').includes('<b>not bold</b>'),
            no_lines: (await page.locator('#file').count()) === 0,
        }),
    },
    {
        name: 'diff',
        path: '/skills/acme/hello/diff?from=1.0.0&to=1.1.0',
        checks: async (page, width) => ({
            summary: ((await page.locator('#diff-summary').textContent()) ?? '').includes('1 added, 1 removed, 2 changed'),
            added: (await page.locator('#added a').allTextContents()).join(',') === 'references/new.md',
            removed: (await page.locator('#removed a').allTextContents()).join(',') === 'references/old.md',
            insert_and_delete: (await page.locator('.diff .add').count()) >= 1 && (await page.locator('.diff .del').count()) >= 1,
            diff_visible: await inView(page, page.locator('pre.diff'), width),
        }),
    },
    {
        name: 'packs',
        path: '/packs',
        checks: async (page) => ({
            pack_card: ((await page.locator('#packs a[href="/packs/acme/starter"]').textContent()) ?? '').trim() === 'acme/starter',
            members: ((await page.locator('#packs .card').first().textContent()) ?? '').includes('acme/hello 1.0.0'),
        }),
    },
    {
        name: 'pack',
        path: '/packs/acme/starter',
        checks: async (page, width) => ({
            title: ((await page.locator('h1#pack-title').textContent()) ?? '').includes('acme/starter'),
            install_skillreg: ((await page.locator('#install-skillreg').textContent()) ?? '').startsWith('skillreg add acme/starter --from http'),
            install_npx: ((await page.locator('#install-npx').textContent()) ?? '').endsWith('/p/acme/starter'),
            install_visible: await inView(page, page.locator('#install-skillreg'), width),
            member_pinned: (await page.locator('table#members a[href="/skills/acme/hello?version=1.0.0"]').count()) === 1,
        }),
    },
    {
        name: 'error',
        path: '/skills/acme/missing',
        status: 404,
        checks: async (page) => ({
            status_heading: ((await page.locator('h1').textContent()) ?? '').trim() === '404',
            home_link: (await page.locator('main a[href="/"]').count()) === 1,
        }),
    },
];

const { chromium } = await importTool('playwright-core');
const profile = mkdtempSync(join(tmpdir(), 'skillreg-web-pages-'));
const report = { url: base, browser: null, pages: [], page_errors: [] };
let context;
let failed = false;
try {
    context = await chromium.launchPersistentContext(profile, {
        executablePath: args.chromium,
        headless: true,
        chromiumSandbox: false,
        args: CHROMIUM_FLAGS,
        viewport: { width: 1280, height: 800 },
        // axe-core is injected as a script, which the pages' policy (rightly) refuses.
        bypassCSP: true,
        timeout: 60_000,
    });
    report.browser = context.browser()?.version() ?? null;
    const page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(15_000);
    page.on('pageerror', (e) => report.page_errors.push(`${page.url()}: ${e.message}`));
    for (const size of WIDTHS) {
        await page.setViewportSize({ width: size.width, height: size.height });
        for (const spec of PAGES) {
            const entry = { page: spec.name, width: size.width, status: null, violations: [], failed: [], overflow: null, screenshot: null };
            try {
                const resp = await page.goto(base + spec.path);
                entry.status = resp?.status() ?? null;
                if (entry.status !== (spec.status ?? 200)) entry.failed.push(`status ${entry.status}`);
                const checks = await spec.checks(page, size.width);
                entry.failed.push(...Object.entries(checks).filter(([, ok]) => !ok).map(([name]) => name));
                entry.overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
                if (entry.overflow > 0) entry.failed.push(`horizontal overflow of ${entry.overflow} px`);
                await page.addScriptTag({ content: axeSource });
                const axe = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
                entry.violations = axe.violations
                    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
                    .map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
                entry.screenshot = join(args.out, `${spec.name}-${size.name}.png`);
                await page.screenshot({ path: entry.screenshot, fullPage: true });
            } catch (e) {
                entry.failed.push(`error: ${e?.message || e}`);
            }
            if (entry.failed.length > 0 || entry.violations.length > 0) failed = true;
            report.pages.push(entry);
        }
    }
    if (report.page_errors.length > 0) failed = true;
} catch (e) {
    report.error = e?.stack || String(e);
    failed = true;
} finally {
    await context?.close().catch(() => {});
    rmSync(profile, { recursive: true, force: true });
}
console.log(JSON.stringify({ ok: !failed, ...report }));
if (failed) process.exitCode = 1;

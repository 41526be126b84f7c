/** The console's style sheet, served as /static/style.css (embedded so it ships inside dist/ with no build step). */
export const STYLE_CSS = String.raw`
:root { --fg: #1d2330; --muted: #667085; --line: #d9dee7; --bg: #f7f8fa; --accent: #2557a7; --ok: #2e7d32; --warn: #b26a00; --bad: #c62828; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; align-items: center; gap: 24px; padding: 10px 20px; background: #1d2330; color: #fff; }
header .brand { font-weight: 700; letter-spacing: 0.04em; }
header nav a { color: #cfd8e6; text-decoration: none; margin-right: 16px; }
header nav a.active, header nav a:hover { color: #fff; text-decoration: underline; }
header .node { margin-left: auto; color: #cfd8e6; font-size: 12px; }
main { padding: 16px 20px 40px; max-width: 1400px; }
h1 { font-size: 20px; margin: 4px 0 12px; word-break: break-all; }
h2 { font-size: 16px; margin: 22px 0 8px; }
a { color: var(--accent); }
.crumbs { color: var(--muted); margin-bottom: 4px; }
.crumbs a { color: var(--muted); }
table { border-collapse: collapse; background: #fff; border: 1px solid var(--line); margin-bottom: 8px; }
th, td { text-align: left; padding: 5px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: #eef1f6; font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.data { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; max-width: 480px; white-space: pre-wrap; word-break: break-all; }
.tag { display: inline-block; padding: 0 6px; border-radius: 8px; font-size: 12px; background: #e8ecf3; margin-right: 4px; }
.tag.bad { background: #fde7e7; color: var(--bad); }
.tag.warn { background: #fff1dc; color: var(--warn); }
.tag.ok { background: #e5f4e6; color: var(--ok); }
.muted { color: var(--muted); }
.error { padding: 10px 14px; border: 1px solid #f3b4b4; background: #fdeeee; color: var(--bad); margin: 12px 0; }
.kv { display: grid; grid-template-columns: max-content auto; gap: 2px 16px; background: #fff; border: 1px solid var(--line); padding: 8px 12px; width: max-content; max-width: 100%; }
.kv dt { color: var(--muted); }
.kv dd { margin: 0; font-variant-numeric: tabular-nums; word-break: break-all; }
.positions { margin: 12px 0 4px; max-width: 900px; }
.bar { position: relative; display: flex; height: 26px; border: 1px solid var(--line); background: #fff; overflow: hidden; }
.bar div { height: 100%; }
.bar .deleted { background: repeating-linear-gradient(45deg, #eceff3, #eceff3 5px, #f7f8fa 5px, #f7f8fa 10px); }
.bar .stable { background: #7fb17f; }
.bar .unstable { background: #e6b45c; }
.bar .unreplicated { background: #e07a7a; }
.legend { display: flex; flex-wrap: wrap; gap: 14px; margin-top: 6px; font-size: 12px; color: var(--muted); }
.legend span::before { content: ""; display: inline-block; width: 10px; height: 10px; margin-right: 4px; vertical-align: -1px; }
.legend .stable::before { background: #7fb17f; }
.legend .unstable::before { background: #e6b45c; }
.legend .unreplicated::before { background: #e07a7a; }
.legend .deleted::before { background: #e3e6eb; }
.mini { display: inline-block; width: 160px; height: 10px; background: #eceff3; vertical-align: middle; margin-left: 6px; }
.mini div { height: 100%; background: var(--accent); }
form.inline { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin: 6px 0 10px; }
input, select, button { font: inherit; padding: 3px 6px; }
button { cursor: pointer; }
button.danger { color: #fff; background: var(--bad); border: 1px solid var(--bad); }
.result { margin: 6px 0; }
`;

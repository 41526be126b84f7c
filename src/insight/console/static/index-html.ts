/** The console's one page, served at / (embedded so it ships inside dist/; the app routes by the URL hash). */
export const INDEX_HTML = String.raw`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Spool console</title>
<link rel="stylesheet" href="/static/style.css">
<link rel="icon" href="data:,">
</head>
<body>
<header>
  <span class="brand">Spool</span>
  <nav>
    <a href="#/" data-nav="overview">Overview</a>
    <a href="#/topics" data-nav="topics">Topics</a>
    <a href="#/groups" data-nav="groups">Groups</a>
    <a href="#/transactions" data-nav="transactions">Transactions</a>
  </nav>
  <span class="node" id="node"></span>
</header>
<main id="app" aria-live="polite"></main>
<script src="/static/app.js"></script>
</body>
</html>
`;

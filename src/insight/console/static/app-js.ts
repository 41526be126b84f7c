/**
 * The console's script, served as /static/app.js: vanilla JS, no build
 * step, embedded here so it ships inside dist/ (String.raw keeps it byte
 * for byte; it must hold no backtick and no dollar-brace).
 *
 * Every piece of data reaches the page through text nodes (the `h` helper
 * never sets innerHTML), so a topic name, key or value cannot inject
 * markup. Each page marks #app with data-ready="<page>" once its figures
 * are drawn; cells carrying a figure have data-field (and rows data-*
 * keys), which the browser test reads.
 */
export const APP_JS = String.raw`
'use strict';
(function () {
  var app = document.getElementById('app');
  var overviewCache = null;

  function h(tag, attrs) {
    var node = document.createElement(tag);
    var a = attrs || {};
    Object.keys(a).forEach(function (name) {
      var value = a[name];
      if (value === null || value === undefined || value === false) return;
      if (name === 'text') node.textContent = String(value);
      else if (name === 'onclick' || name === 'onsubmit' || name === 'onchange') node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, String(value));
    });
    for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }
  function append(node, child) {
    if (child === null || child === undefined || child === false) return;
    if (Array.isArray(child)) { child.forEach(function (c) { append(node, c); }); return; }
    node.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  function link(path, text) { return h('a', { href: '#' + path, text: text }); }
  function enc(s) { return encodeURIComponent(s); }
  function num(value) { return value === null || value === undefined || value < 0 ? '-' : String(value); }
  function time(ms) { return ms === null || ms === undefined || ms < 0 ? '-' : new Date(ms).toISOString(); }
  function duration(ms) {
    if (ms === null || ms === undefined || ms < 0) return '-';
    if (ms < 1000) return ms + ' ms';
    if (ms < 120000) return (ms / 1000).toFixed(1) + ' s';
    return Math.round(ms / 60000) + ' min';
  }
  function list(values) { return values && values.length ? values.join(', ') : '-'; }
  function cell(field, value, cls) { return h('td', { 'data-field': field, 'class': cls || 'num', text: value }); }
  function table(headers, rows, attrs) {
    return h('table', attrs || {},
      h('thead', {}, h('tr', {}, headers.map(function (x) { return h('th', { text: x }); }))),
      h('tbody', {}, rows.length ? rows : h('tr', {}, h('td', { colspan: headers.length, 'class': 'muted', text: 'none' }))));
  }
  function kv(pairs) {
    return h('dl', { 'class': 'kv' }, pairs.map(function (p) { return [h('dt', { text: p[0] }), h('dd', { 'data-field': p[2] || null, text: p[1] })]; }));
  }
  function tag(text, cls) { return h('span', { 'class': 'tag ' + (cls || ''), text: text }); }

  function api(path, options) {
    return fetch('/api/' + path, options || {}).then(function (response) {
      return response.json().then(function (body) {
        if (!response.ok) { var e = new Error((body.error || response.status) + ': ' + (body.message || '')); e.body = body; throw e; }
        return body;
      });
    });
  }
  function post(path, body) {
    return api(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body || {}) });
  }
  function overview() {
    if (overviewCache) return Promise.resolve(overviewCache);
    return api('overview').then(function (o) { overviewCache = o; return o; });
  }

  function show(page, nodes) {
    app.replaceChildren();
    append(app, nodes);
    app.setAttribute('data-ready', page);
  }
  function fail(page, error) {
    show(page + '-error', h('div', { 'class': 'error', text: String(error.message || error) }));
  }

  // ---- pages

  function overviewPage() {
    return api('overview').then(function (o) {
      overviewCache = o;
      var q = o.quorum;
      var parts = [
        h('h1', { text: 'Cluster ' + o.clusterId }),
        kv([['This node', String(o.nodeId), 'nodeId'], ['Roles', o.roles.join(', '), 'roles'], ['Metadata offset', num(o.metadataOffset), 'metadataOffset'], ['Console actions', o.actionsEnabled ? 'enabled' : 'disabled', 'actionsEnabled']]),
        h('h2', { text: 'Brokers' }),
        table(['Id', 'Host', 'Port', 'Rack', 'State'], o.brokers.map(function (b) {
          var state = b.fenced ? tag('fenced', 'bad') : b.inControlledShutdown ? tag('controlled shutdown', 'warn') : tag('unfenced', 'ok');
          return h('tr', { 'data-broker': b.id }, cell('id', b.id), h('td', { text: b.host }), cell('port', b.port), h('td', { text: b.rack || '-' }), h('td', { 'data-field': 'state' }, state));
        }), { id: 'brokers' }),
        h('h2', { text: 'Controller quorum' }),
      ];
      if (q === null) parts.push(h('p', { 'class': 'muted', text: 'This node runs no Raft client.' }));
      else {
        parts.push(kv([['Leader', q.leaderId < 0 ? 'none' : String(q.leaderId), 'leaderId'], ['Leader epoch', num(q.leaderEpoch), 'leaderEpoch'], ['High watermark', num(q.highWatermark), 'highWatermark']]));
        var replicaRows = function (kind) {
          return function (r) {
            return h('tr', { 'data-replica': r.id, 'data-kind': kind }, cell('id', r.id), h('td', { text: kind }), cell('logEndOffset', num(r.logEndOffset)), cell('lag', q.highWatermark >= 0 && r.logEndOffset >= 0 ? String(Math.max(0, q.highWatermark - r.logEndOffset)) : '-'), h('td', { text: time(r.lastFetchTimestamp) }), h('td', { text: time(r.lastCaughtUpTimestamp) }));
          };
        };
        parts.push(table(['Id', 'Kind', 'Log end offset', 'Behind HW', 'Last fetch', 'Last caught up'], q.voters.map(replicaRows('voter')).concat(q.observers.map(replicaRows('observer'))), { id: 'quorum' }));
      }
      show('overview', parts);
    });
  }

  function topicsPage() {
    return api('topics').then(function (topics) {
      show('topics', [
        h('h1', { text: 'Topics' }),
        table(['Name', 'Partitions', 'Replication factor', 'Under-replicated', 'Offline', 'Topic id'], topics.map(function (t) {
          return h('tr', { 'data-topic': t.name },
            h('td', { 'data-field': 'name' }, link('/topics/' + enc(t.name), t.name), t.internal ? tag('internal') : null),
            cell('partitions', t.partitions), cell('replicationFactor', t.replicationFactor),
            h('td', { 'data-field': 'underReplicated', 'class': 'num' }, t.underReplicated ? tag(String(t.underReplicated), 'bad') : '0'),
            h('td', { 'data-field': 'offline', 'class': 'num' }, t.offline ? tag(String(t.offline), 'bad') : '0'),
            h('td', { 'class': 'data', text: t.topicId }));
        }), { id: 'topics' }),
      ]);
    });
  }

  function topicPage(name) {
    return api('topics/' + enc(name)).then(function (t) {
      var configs = Object.keys(t.configs);
      show('topic', [
        h('div', { 'class': 'crumbs' }, link('/topics', 'Topics'), ' / '),
        h('h1', { text: t.name }),
        kv([['Topic id', t.topicId], ['Partitions', String(t.partitions.length), 'partitionCount']]),
        h('h2', { text: 'Partitions' }),
        table(['Partition', 'Leader', 'Leader epoch', 'Replicas', 'ISR', 'ELR', 'Log start', 'LSO', 'HW', 'LEO'], t.partitions.map(function (p) {
          var l = p.local || {};
          var under = p.isr.length < p.replicas.length;
          return h('tr', { 'data-partition': p.partition },
            h('td', { 'data-field': 'partition' }, link('/topics/' + enc(t.name) + '/' + p.partition, String(p.partition))),
            h('td', { 'data-field': 'leader', 'class': 'num' }, p.leader < 0 ? tag('none', 'bad') : String(p.leader)),
            cell('leaderEpoch', p.leaderEpoch), h('td', { text: list(p.replicas) }),
            h('td', { 'data-field': 'isr' }, list(p.isr), under ? tag('under-replicated', 'bad') : null),
            h('td', { text: list(p.elr) }),
            cell('logStartOffset', num(l.logStartOffset)), cell('lastStableOffset', num(l.lastStableOffset)), cell('highWatermark', num(l.highWatermark)), cell('logEndOffset', num(l.logEndOffset)));
        }), { id: 'partitions' }),
        h('h2', { text: 'Configs set on the topic' }),
        table(['Name', 'Value'], configs.map(function (c) { return h('tr', {}, h('td', { text: c }), h('td', { 'class': 'data', text: t.configs[c] })); })),
      ]);
    });
  }

  function positionsBar(l) {
    var end = Math.max(l.logEndOffset, 1);
    var pct = function (from, to) { return (Math.max(0, to - from) / end * 100) + '%'; };
    var piece = function (cls, from, to, title) { var d = h('div', { 'class': cls, title: title + ': [' + from + ', ' + to + ')' }); d.style.width = pct(from, to); return d; };
    return h('div', { 'class': 'positions', id: 'positions' },
      h('div', { 'class': 'bar' },
        piece('deleted', 0, l.logStartOffset, 'deleted'),
        piece('stable', l.logStartOffset, l.lastStableOffset, 'readable by read_committed'),
        piece('unstable', l.lastStableOffset, l.highWatermark, 'open transactions (read_uncommitted only)'),
        piece('unreplicated', l.highWatermark, l.logEndOffset, 'not yet replicated to the ISR')),
      h('div', { 'class': 'legend' },
        h('span', { 'class': 'deleted', text: 'below log start ' + l.logStartOffset }),
        h('span', { 'class': 'stable', text: 'log start to LSO ' + l.lastStableOffset }),
        h('span', { 'class': 'unstable', text: 'LSO to HW ' + l.highWatermark }),
        h('span', { 'class': 'unreplicated', text: 'HW to LEO ' + l.logEndOffset })));
  }

  function partitionPage(name, index) {
    return Promise.all([api('topics/' + enc(name) + '/partitions/' + index), overview()]).then(function (all) {
      var p = all[0];
      var o = all[1];
      var l = p.local;
      var parts = [
        h('div', { 'class': 'crumbs' }, link('/topics', 'Topics'), ' / ', link('/topics/' + enc(name), name), ' / '),
        h('h1', { text: name + '-' + p.partition }),
        kv([['Leader', p.leader < 0 ? 'none' : String(p.leader), 'leader'], ['Leader epoch', String(p.leaderEpoch), 'leaderEpoch'], ['Partition epoch', String(p.partitionEpoch), 'partitionEpoch'],
          ['Replicas', list(p.replicas), 'replicas'], ['ISR', list(p.isr), 'isr'], ['ELR', list(p.elr), 'elr'], ['Last known ELR', list(p.lastKnownElr), 'lastKnownElr']]),
      ];
      if (l === null) parts.push(h('p', { 'class': 'muted', text: 'This node hosts no replica of this partition: positions, segments and records are shown by the nodes that do.' }));
      else {
        parts.push(h('h2', { text: 'Positions on node ' + o.nodeId + ' (' + l.role + ')' }), positionsBar(l),
          kv([['Log start offset', String(l.logStartOffset), 'logStartOffset'], ['Last stable offset', String(l.lastStableOffset), 'lastStableOffset'], ['High watermark', String(l.highWatermark), 'highWatermark'], ['Log end offset', String(l.logEndOffset), 'logEndOffset'], ['Size', l.sizeBytes + ' bytes', 'sizeBytes']]));
        parts.push(h('h2', { text: 'Replicas' }));
        if (p.replicaStates === null) parts.push(h('p', { 'class': 'muted', text: 'Follower positions are known on the leader only.' }));
        else parts.push(table(['Broker', 'In ISR', 'Log end offset', 'Behind leader', 'Last caught up', 'Last fetch'], p.replicaStates.map(function (r) {
          var share = l.logEndOffset > 0 && r.logEndOffset >= 0 ? r.logEndOffset / l.logEndOffset : 0;
          var mini = h('span', { 'class': 'mini' }, h('div', {}));
          mini.firstChild.style.width = (share * 100) + '%';
          return h('tr', { 'data-replica': r.brokerId }, cell('brokerId', r.brokerId), h('td', { 'data-field': 'inIsr' }, r.inIsr ? tag('yes', 'ok') : tag('no', 'bad')),
            h('td', { 'data-field': 'logEndOffset', 'class': 'num' }, num(r.logEndOffset), mini), cell('behind', r.logEndOffset < 0 ? '-' : String(Math.max(0, l.logEndOffset - r.logEndOffset))),
            h('td', { text: time(r.lastCaughtUpTimeMs) }), h('td', { text: time(r.lastFetchTimeMs) }));
        }), { id: 'replicas' }));
        parts.push(h('h2', { text: 'Segments (' + p.segmentCount + ')' }), table(['Base offset', 'Next offset', 'Size (bytes)', 'Offset index entries', 'Time index entries', 'First timestamp', 'Max timestamp'], p.segments.map(function (s) {
          return h('tr', { 'data-segment': s.baseOffset }, cell('baseOffset', s.baseOffset), cell('nextOffset', s.nextOffset), cell('sizeBytes', s.sizeBytes), cell('offsetIndexEntries', s.offsetIndexEntries), cell('timeIndexEntries', s.timeIndexEntries), h('td', { text: time(s.firstTimestamp) }), h('td', { text: time(s.maxTimestamp) }));
        }), { id: 'segments' }));
        parts.push(h('h2', { text: 'Producers' }), table(['Producer id', 'Epoch', 'Last sequence', 'Last timestamp', 'Open transaction from'], p.producers.map(function (x) {
          return h('tr', { 'data-producer': x.producerId }, cell('producerId', x.producerId), cell('producerEpoch', x.producerEpoch), cell('lastSequence', x.lastSequence), h('td', { text: time(x.lastTimestamp) }), cell('currentTxnStartOffset', num(x.currentTxnStartOffset)));
        }), { id: 'producers' }));
        parts.push(h('h2', { text: 'Open transactions' }), openTxnTable(p.openTransactions, false));
        if (o.actionsEnabled && l.role === 'leader') parts.push(deleteRecordsForm(name, p.partition, l));
        parts.push(recordBrowser(name, p.partition, l));
      }
      show('partition', parts);
    });
  }

  function openTxnTable(rows, withPartition) {
    var headers = (withPartition ? ['Partition'] : []).concat(['Producer id', 'Epoch', 'First offset', 'Age', 'Holds the LSO']);
    return table(headers, rows.map(function (t) {
      var where = withPartition ? [h('td', {}, link('/topics/' + enc(t.topic) + '/' + t.partition, t.topic + '-' + t.partition))] : [];
      return h('tr', { 'data-producer': t.producerId, 'data-topic-partition': withPartition ? t.topic + '-' + t.partition : null }, where, cell('producerId', t.producerId), cell('producerEpoch', t.producerEpoch), cell('firstOffset', t.firstOffset), cell('age', duration(t.ageMs)), h('td', { 'data-field': 'holdsLastStableOffset' }, t.holdsLastStableOffset ? tag('yes', 'warn') : 'no'));
    }), { id: withPartition ? 'open-transactions' : 'partition-open-transactions' });
  }

  function deleteRecordsForm(name, partition, l) {
    var input = h('input', { type: 'number', min: l.logStartOffset, max: l.highWatermark, value: l.highWatermark, id: 'delete-before' });
    var result = h('div', { 'class': 'result', id: 'delete-result' });
    var submit = function (event) {
      event.preventDefault();
      var before = input.value;
      if (!window.confirm('Delete every record of ' + name + '-' + partition + ' before offset ' + before + '? This cannot be undone.')) return;
      post('topics/' + enc(name) + '/partitions/' + partition + '/delete-records?before=' + enc(before)).then(function (r) {
        result.replaceChildren('Log start offset is now ' + r.lowWatermark + '.');
        result.setAttribute('data-done', 'true');
        overviewCache = null;
      }, function (e) { result.replaceChildren(h('span', { 'class': 'error', text: e.message })); });
    };
    return [h('h2', { text: 'Delete records' }), h('form', { 'class': 'inline', id: 'delete-records', onsubmit: submit }, 'Delete records before offset', input, h('button', { type: 'submit', 'class': 'danger', text: 'Delete' })), result];
  }

  function recordBrowser(name, partition, l) {
    var mode = h('select', { id: 'browse-mode' }, h('option', { value: 'offset', text: 'from offset' }), h('option', { value: 'timestamp', text: 'from timestamp (ms)' }));
    var from = h('input', { id: 'browse-from', type: 'text', value: String(l.logStartOffset), size: 16 });
    var limit = h('input', { id: 'browse-limit', type: 'number', min: 1, max: 200, value: 20 });
    var output = h('div', { id: 'records' });
    var load = function (params) {
      output.removeAttribute('data-ready');
      api('topics/' + enc(name) + '/partitions/' + partition + '/records?' + params).then(function (r) {
        output.replaceChildren(recordsTable(r), r.records.length ? h('button', { type: 'button', id: 'browse-next', text: 'Next from ' + r.nextOffset, onclick: function () { from.value = String(r.nextOffset); mode.value = 'offset'; load('offset=' + r.nextOffset + '&limit=' + enc(limit.value)); } }) : h('p', { 'class': 'muted', text: 'No more records.' }));
        output.setAttribute('data-ready', 'true');
      }, function (e) { output.replaceChildren(h('div', { 'class': 'error', text: e.message })); output.setAttribute('data-ready', 'error'); });
    };
    var submit = function (event) { event.preventDefault(); load(mode.value + '=' + enc(from.value.trim()) + '&limit=' + enc(limit.value)); };
    return [h('h2', { text: 'Records' }), h('form', { 'class': 'inline', id: 'browse', onsubmit: submit }, mode, from, 'limit', limit, h('button', { type: 'submit', text: 'Load' })), output];
  }

  function bytes(value) {
    if (value === null) return h('span', { 'class': 'muted', text: 'null' });
    return [value.encoding === 'base64' ? tag('base64') : null, value.data, value.truncated ? h('span', { 'class': 'muted', text: ' ... (' + value.sizeBytes + ' bytes)' }) : null];
  }

  function recordsTable(r) {
    return table(['Offset', 'Timestamp', 'Key', 'Value', 'Headers', 'Batch'], r.records.map(function (x) {
      var flags = [x.batch.isControl ? tag('control') : null, x.batch.isTransactional ? tag('transactional') : null, x.aboveHighWatermark ? tag('above HW', 'bad') : x.aboveLastStableOffset ? tag('above LSO', 'warn') : null];
      return h('tr', { 'data-offset': x.offset }, cell('offset', x.offset), h('td', { text: time(x.timestamp) }),
        h('td', { 'class': 'data', 'data-field': 'key' }, bytes(x.key)), h('td', { 'class': 'data', 'data-field': 'value' }, bytes(x.value)),
        h('td', { 'class': 'data', 'data-field': 'headers' }, x.headers.map(function (hd) { return h('div', {}, hd.key + ': ', bytes(hd.value)); })),
        h('td', { 'data-field': 'batch' }, flags, x.batch.producerId >= 0 ? 'pid ' + x.batch.producerId : ''));
    }), { id: 'records-table' });
  }

  function groupsPage() {
    return api('groups').then(function (groups) {
      show('groups', [
        h('h1', { text: 'Consumer groups coordinated by this node' }),
        table(['Group', 'Protocol', 'State', 'Members'], groups.map(function (g) {
          return h('tr', { 'data-group': g.groupId }, h('td', { 'data-field': 'groupId' }, link('/groups/' + enc(g.groupId), g.groupId)), h('td', { 'data-field': 'protocol', text: g.protocol }), h('td', { 'data-field': 'state', text: g.state }), cell('members', g.members));
        }), { id: 'groups' }),
      ]);
    });
  }

  function groupPage(id) {
    return Promise.all([api('groups/' + enc(id)), overview()]).then(function (all) {
      var g = all[0];
      var o = all[1];
      var totalLag = g.offsets.reduce(function (sum, x) { return sum + (x.lag || 0); }, 0);
      var parts = [
        h('div', { 'class': 'crumbs' }, link('/groups', 'Groups'), ' / '),
        h('h1', { text: g.groupId }),
        kv([['State', g.state, 'state'], ['Protocol', g.protocol, 'protocol'], ['Assignor', g.assignor || '-', 'assignor'], ['Group epoch', num(g.groupEpoch), 'groupEpoch'], ['Members', String(g.members.length), 'memberCount'], ['Total lag', String(totalLag), 'totalLag']]),
        h('h2', { text: 'Members' }),
        table(['Member id', 'Instance id', 'Client id', 'Host', 'Epoch', 'Assignment'], g.members.map(function (m) {
          return h('tr', { 'data-member': m.memberId }, h('td', { 'class': 'data', text: m.memberId }), h('td', { text: m.groupInstanceId || '-' }), h('td', { text: m.clientId }), h('td', { text: m.clientHost }), cell('memberEpoch', num(m.memberEpoch)),
            h('td', { 'data-field': 'assignment', text: m.assignment.map(function (a) { return a.topic + ': ' + a.partitions.join(','); }).join('; ') || '-' }));
        }), { id: 'members' }),
        h('h2', { text: 'Offsets and lag' }),
        table(['Topic', 'Partition', 'Committed offset', 'High watermark', 'Lag', 'Owner'], g.offsets.map(function (x) {
          return h('tr', { 'data-topic-partition': x.topic + '-' + x.partition }, h('td', {}, link('/topics/' + enc(x.topic), x.topic)), cell('partition', x.partition), cell('committedOffset', num(x.committedOffset)), cell('highWatermark', num(x.highWatermark)), cell('lag', num(x.lag)), h('td', { 'class': 'data', text: x.clientId ? x.clientId + ' (' + x.memberId + ')' : '-' }));
        }), { id: 'offsets' }),
      ];
      if (o.actionsEnabled) parts.push(resetOffsetsForm(g));
      show('group', parts);
    });
  }

  function resetOffsetsForm(g) {
    var to = h('select', { id: 'reset-to' }, h('option', { value: 'earliest', text: 'to earliest' }), h('option', { value: 'latest', text: 'to latest' }), h('option', { value: 'offset', text: 'to offset' }));
    var offset = h('input', { id: 'reset-offset', type: 'number', min: 0, placeholder: 'offset' });
    var topicInput = h('input', { id: 'reset-topic', type: 'text', placeholder: 'topic (all when empty)' });
    var result = h('div', { 'class': 'result', id: 'reset-result' });
    var submit = function (event) {
      event.preventDefault();
      var body = { to: to.value };
      if (to.value === 'offset') body.offset = Number(offset.value);
      if (topicInput.value.trim() !== '') body.topic = topicInput.value.trim();
      if (!window.confirm('Reset the offsets of group ' + g.groupId + ' ' + to.options[to.selectedIndex].text + (body.offset !== undefined ? ' ' + body.offset : '') + (body.topic ? ' on topic ' + body.topic : ' on every topic it has offsets for') + '?')) return;
      post('groups/' + enc(g.groupId) + '/reset-offsets', body).then(function (r) {
        result.replaceChildren(table(['Topic', 'Partition', 'New offset', 'Error'], r.partitions.map(function (x) { return h('tr', {}, h('td', { text: x.topic }), cell('partition', x.partition), cell('offset', num(x.offset)), h('td', { text: x.error || '-' })); })));
        result.setAttribute('data-done', 'true');
      }, function (e) { result.replaceChildren(h('span', { 'class': 'error', text: e.message })); result.setAttribute('data-done', 'error'); });
    };
    return [h('h2', { text: 'Reset offsets' }), h('p', { 'class': 'muted', text: 'Only while the group has no members, as kafka-consumer-groups --reset-offsets.' }), h('form', { 'class': 'inline', id: 'reset-offsets', onsubmit: submit }, to, offset, topicInput, h('button', { type: 'submit', 'class': 'danger', text: 'Reset' })), result];
  }

  function transactionsPage() {
    return api('transactions').then(function (t) {
      show('transactions', [
        h('h1', { text: 'Transactions' }),
        h('h2', { text: 'Transactional ids coordinated by this node' + (t.transactionalIdCount > t.transactionalIds.length ? ' (first ' + t.transactionalIds.length + ' of ' + t.transactionalIdCount + ')' : '') }),
        table(['Transactional id', 'State', 'Producer id', 'Epoch', 'Timeout', 'Started', 'Partitions'], t.transactionalIds.map(function (x) {
          return h('tr', { 'data-transactional-id': x.transactionalId }, h('td', { 'data-field': 'transactionalId', text: x.transactionalId }), h('td', { 'data-field': 'state', text: x.state }), cell('producerId', x.producerId), cell('producerEpoch', x.producerEpoch), cell('transactionTimeoutMs', duration(x.transactionTimeoutMs)), h('td', { text: time(x.transactionStartTimeMs) }),
            h('td', { 'data-field': 'partitions', text: x.partitions.map(function (p) { return p.topic + '-' + p.partition; }).join(', ') || '-' }));
        }), { id: 'transactional-ids' }),
        h('h2', { text: 'Open transactions holding back the last stable offset (partitions this node leads)' }),
        openTxnTable(t.openTransactions, true),
      ]);
    });
  }

  // ---- routing: #/, #/topics, #/topics/<name>, #/topics/<name>/<partition>, #/groups, #/groups/<id>, #/transactions

  function route() {
    var parts = (location.hash.replace(/^#\/?/, '') || '').split('/').filter(function (s) { return s !== ''; }).map(decodeURIComponent);
    var section = parts[0] || 'overview';
    document.querySelectorAll('header nav a').forEach(function (a) { a.classList.toggle('active', a.getAttribute('data-nav') === section); });
    app.removeAttribute('data-ready');
    var page;
    var name = section;
    if (section === 'topics' && parts.length >= 3) { name = 'partition'; page = partitionPage(parts[1], Number(parts[2])); }
    else if (section === 'topics' && parts.length === 2) { name = 'topic'; page = topicPage(parts[1]); }
    else if (section === 'topics') page = topicsPage();
    else if (section === 'groups' && parts.length >= 2) { name = 'group'; page = groupPage(parts.slice(1).join('/')); }
    else if (section === 'groups') page = groupsPage();
    else if (section === 'transactions') page = transactionsPage();
    else { name = 'overview'; page = overviewPage(); }
    page.catch(function (error) { fail(name, error); });
  }

  window.addEventListener('hashchange', route);
  overview().then(function (o) { document.getElementById('node').textContent = 'node ' + o.nodeId + ' of cluster ' + o.clusterId; }, function () {});
  route();
})();
`;

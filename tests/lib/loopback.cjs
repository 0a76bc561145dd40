// Preload (node --require) that keeps a server on loopback: Express-based
// MCP servers call app.listen(PORT), which binds every interface.
'use strict';
const net = require('node:net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' || typeof args[0] === 'string') {
    if (args.length === 1 || typeof args[1] === 'function')
      args.splice(1, 0, '127.0.0.1');
  } else if (args[0] && typeof args[0] === 'object' && args[0].host === undefined &&
      args[0].path === undefined) {
    args[0] = { ...args[0], host: '127.0.0.1' };
  }
  return listen.apply(this, args);
};

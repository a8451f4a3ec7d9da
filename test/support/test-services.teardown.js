/** Jest's globalTeardown: stops what test-services.setup.js started (see test-services.js). */
'use strict';

const { tearDownServices } = require('./test-services');

module.exports = () => tearDownServices();

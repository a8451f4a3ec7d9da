/**
 * Installed for every e2e and fault suite (jest.config.js): a promise of the module that rejects
 * with nobody listening fails the suite that caused it.
 */
import { failOnUnhandledRejections } from './unhandled-rejections';

failOnUnhandledRejections();

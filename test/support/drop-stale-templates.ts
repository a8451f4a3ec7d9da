/**
 * `npm run test:drop-templates`: drops the migrated test templates of other migration sets from
 * the test server (TEST_PG_URL or the default), keeping the current one. Each migration change
 * leaves a template behind; a run never copies a stale one (their names differ), this only frees
 * the space.
 */
import { dropStaleTemplates, templateName } from './postgres';

dropStaleTemplates()
  .then(({ dropped, kept }) => {
    console.log(`current template: ${templateName()}`);
    console.log(dropped.length ? `dropped: ${dropped.join(', ')}` : 'no stale template to drop');
    if (kept.length) console.log(`could not drop: ${kept.join('; ')}`);
  })
  .catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });

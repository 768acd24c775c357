import { InvalidLockArgumentError } from '../errors.js';

/**
 * @internal Imports an optional peer dependency (a store's driver, prom-client, @opentelemetry/api,
 * @nestjs/microservices ...), or says which package to install: InvalidLockArgumentError
 * `${needs} needs the "${packageName}" package: npm install ${packageName}`. Other import errors
 * (a broken install) are thrown as they are. The one loader of the library: stores, metrics and the
 * Nest layer all import it from here.
 */
export async function loadOptional<T>(packageName: string, needs: string): Promise<T> {
  try {
    return (await import(packageName)) as T;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new InvalidLockArgumentError(`${needs} needs the "${packageName}" package: npm install ${packageName}`, {
        cause: error,
      });
    }
    throw error;
  }
}

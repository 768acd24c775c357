import { InvalidLockArgumentError } from '../errors.js';

/** Imports a store driver (an optional peer dependency), or says which package to install. */
export async function loadDriver<T>(packageName: string, backend: string): Promise<T> {
  try {
    return (await import(packageName)) as T;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new InvalidLockArgumentError(`The '${backend}' backend needs the "${packageName}" package: npm install ${packageName}`, { cause: error });
    }
    throw error;
  }
}

// The screening module: what other modules and the CLI use.

export {
  normalizeListedAddress,
  sdnListProvider,
  SDN_LIST,
  type ScreenOptions,
  type ScreeningProvider,
} from './provider.ts';
export { parseSdnXml, SdnFormatError, SdnXmlParser, type SdnAddress, type SdnDocument } from './sdn-xml.ts';
export {
  downloadSdnXml,
  screenAddress,
  seedSdnFixture,
  syncSdnList,
  type ScreeningResult,
  type SyncSdnListParameters,
  type SyncSdnListResult,
} from './service.ts';
export { XmlSyntaxError } from './xml-scanner.ts';

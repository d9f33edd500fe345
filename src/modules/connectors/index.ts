// The connectors module's public entry: what other modules, the API and the processes may use of it.
export { CONNECTORS, isConnectorName, passThroughOf, processorAccountProblem } from './registry.ts';
export { connectorAccountsTag, type ConnectorAccountService } from './service.ts';

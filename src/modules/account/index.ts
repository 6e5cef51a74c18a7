export {
  accountsPage,
  findAccountByAddress,
  findAccountById,
  findOrCreateAccount,
  type AccountRow,
} from './store.ts';

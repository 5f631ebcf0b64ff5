export { compileCondition, ExprError, type Condition } from './expr.js';
export {
  readCondition,
  readNotificationsConfig,
  subscriptionsOf,
  type NotificationService,
  type NotificationTemplate,
  type NotificationsConfig,
  type Subscription,
  type TriggerCondition,
} from './config.js';
